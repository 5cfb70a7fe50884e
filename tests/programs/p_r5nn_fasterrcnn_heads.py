"""torchvision.models.detection.roi_heads / faster_rcnn / poolers shrunk and written in torch:
a bilinear RoIAlign (the _roi_align reference from torchvision/ops/roi_align.py's pure-torch
fallback), MultiScaleRoIAlign's LevelMapper (infer_scale, canonical level mapping), TwoMLPHead,
FastRCNNPredictor, BoxCoder.encode/decode with weights (10, 10, 5, 5), fastrcnn_loss with
smooth_l1 beta=1/9 and postprocess_detections (softmax, clip, remove_small_boxes, score
threshold, batched NMS loop, top detections)."""
import importlib
import math
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")


def _bilinear_interpolate(input, roi_batch_ind, y, x, ymask, xmask):
    _, channels, height, width = input.size()
    y = y.clamp(min=0)
    x = x.clamp(min=0)
    y_low = y.int()
    x_low = x.int()
    y_high = torch.where(y_low >= height - 1, height - 1, y_low + 1)
    y_low = torch.where(y_low >= height - 1, height - 1, y_low)
    y = torch.where(y_low >= height - 1, y.to(input.dtype), y)
    x_high = torch.where(x_low >= width - 1, width - 1, x_low + 1)
    x_low = torch.where(x_low >= width - 1, width - 1, x_low)
    x = torch.where(x_low >= width - 1, x.to(input.dtype), x)
    ly = y - y_low
    lx = x - x_low
    hy = 1.0 - ly
    hx = 1.0 - lx

    def masked_index(y, x):
        if ymask is not None:
            assert xmask is not None
            y = torch.where(ymask[:, None, :], y, 0)
            x = torch.where(xmask[:, None, :], x, 0)
        return input[
            roi_batch_ind[:, None, None, None, None, None],
            torch.arange(channels, device=input.device)[None, :, None, None, None, None],
            y[:, None, :, None, :, None],
            x[:, None, None, :, None, :],
        ]

    v1 = masked_index(y_low, x_low)
    v2 = masked_index(y_low, x_high)
    v3 = masked_index(y_high, x_low)
    v4 = masked_index(y_high, x_high)

    def outer_prod(y, x):
        return y[:, None, :, None, :, None] * x[:, None, None, :, None, :]

    w1 = outer_prod(hy, hx)
    w2 = outer_prod(hy, lx)
    w3 = outer_prod(ly, hx)
    w4 = outer_prod(ly, lx)
    return w1 * v1 + w2 * v2 + w3 * v3 + w4 * v4


def roi_align(input, rois, output_size, spatial_scale, sampling_ratio, aligned):
    orig_dtype = input.dtype
    _, _, height, width = input.size()
    ph = torch.arange(output_size[0], device=input.device)
    pw = torch.arange(output_size[1], device=input.device)
    roi_batch_ind = rois[:, 0].int()
    offset = 0.5 if aligned else 0.0
    roi_start_w = rois[:, 1] * spatial_scale - offset
    roi_start_h = rois[:, 2] * spatial_scale - offset
    roi_end_w = rois[:, 3] * spatial_scale - offset
    roi_end_h = rois[:, 4] * spatial_scale - offset
    roi_width = roi_end_w - roi_start_w
    roi_height = roi_end_h - roi_start_h
    if not aligned:
        roi_width = torch.clamp(roi_width, min=1.0)
        roi_height = torch.clamp(roi_height, min=1.0)
    bin_size_h = roi_height / output_size[0]
    bin_size_w = roi_width / output_size[1]
    exact_sampling = sampling_ratio > 0
    roi_bin_grid_h = sampling_ratio if exact_sampling else torch.ceil(roi_height / output_size[0])
    roi_bin_grid_w = sampling_ratio if exact_sampling else torch.ceil(roi_width / output_size[1])
    if exact_sampling:
        count = max(roi_bin_grid_h * roi_bin_grid_w, 1)
        iy = torch.arange(roi_bin_grid_h, device=input.device)
        ix = torch.arange(roi_bin_grid_w, device=input.device)
        ymask = None
        xmask = None
    else:
        count = torch.clamp(roi_bin_grid_h * roi_bin_grid_w, min=1)
        iy = torch.arange(height, device=input.device)
        ix = torch.arange(width, device=input.device)
        ymask = iy[None, :] < roi_bin_grid_h[:, None]
        xmask = ix[None, :] < roi_bin_grid_w[:, None]

    def from_K(t):
        return t[:, None, None]

    y = (from_K(roi_start_h) + ph[None, :, None] * from_K(bin_size_h)
         + (iy[None, None, :] + 0.5).to(input.dtype) * from_K(bin_size_h / roi_bin_grid_h))
    x = (from_K(roi_start_w) + pw[None, :, None] * from_K(bin_size_w)
         + (ix[None, None, :] + 0.5).to(input.dtype) * from_K(bin_size_w / roi_bin_grid_w))
    val = _bilinear_interpolate(input, roi_batch_ind, y, x, ymask, xmask)
    if not exact_sampling:
        val = torch.where(ymask[:, None, None, None, :, None], val, 0)
        val = torch.where(xmask[:, None, None, None, None, :], val, 0)
    output = val.sum((-1, -2))
    if isinstance(count, torch.Tensor):
        output /= count[:, None, None, None]
    else:
        output /= count
    return output.to(orig_dtype)


def convert_boxes_to_roi_format(boxes):
    concat_boxes = torch.cat(boxes, dim=0)
    temp = []
    for i, b in enumerate(boxes):
        temp.append(torch.full_like(b[:, :1], i))
    ids = torch.cat(temp, dim=0)
    return torch.cat([ids, concat_boxes], dim=1)


class LevelMapper:
    def __init__(self, k_min, k_max, canonical_scale=224, canonical_level=4, eps=1e-6):
        self.k_min = k_min
        self.k_max = k_max
        self.s0 = canonical_scale
        self.lvl0 = canonical_level
        self.eps = eps

    def __call__(self, boxlists):
        s = torch.sqrt(torch.cat([box_area(boxlist) for boxlist in boxlists]))
        target_lvls = torch.floor(self.lvl0 + torch.log2(s / self.s0) + torch.tensor(self.eps, dtype=s.dtype))  # noqa: E501
        target_lvls = torch.clamp(target_lvls, min=self.k_min, max=self.k_max)
        return (target_lvls.to(torch.int64) - self.k_min).to(torch.int64)


def box_area(boxes):
    return (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])


def infer_scale(feature, original_size):
    size = feature.shape[-2:]
    possible_scales = []
    for s1, s2 in zip(size, original_size):
        approx_scale = float(s1) / float(s2)
        scale = 2 ** float(torch.tensor(approx_scale).log2().round())
        possible_scales.append(scale)
    return possible_scales[0]


class MultiScaleRoIAlign(nn.Module):
    def __init__(self, featmap_names, output_size, sampling_ratio):
        super().__init__()
        if isinstance(output_size, int):
            output_size = (output_size, output_size)
        self.featmap_names = featmap_names
        self.sampling_ratio = sampling_ratio
        self.output_size = tuple(output_size)

    def forward(self, x, boxes, image_shapes):
        x_filtered = [v for k, v in x.items() if k in self.featmap_names]
        original_input_shape = (max(s[0] for s in image_shapes), max(s[1] for s in image_shapes))
        scales = [infer_scale(feat, original_input_shape) for feat in x_filtered]
        lvl_min = -torch.log2(torch.tensor(scales[0], dtype=torch.float32)).item()
        lvl_max = -torch.log2(torch.tensor(scales[-1], dtype=torch.float32)).item()
        mapper = LevelMapper(int(lvl_min), int(lvl_max), canonical_scale=16, canonical_level=2)
        rois = convert_boxes_to_roi_format(boxes)
        levels = mapper(boxes)
        print("scales", scales, "levels", levels.tolist())
        num_rois = len(rois)
        num_channels = x_filtered[0].shape[1]
        result = torch.zeros((num_rois, num_channels) + self.output_size,
                             dtype=x_filtered[0].dtype)
        for level, (per_level_feature, scale) in enumerate(zip(x_filtered, scales)):
            idx_in_level = torch.where(levels == level)[0]
            rois_per_level = rois[idx_in_level]
            result_idx_in_level = roi_align(per_level_feature, rois_per_level, self.output_size,
                                            spatial_scale=scale,
                                            sampling_ratio=self.sampling_ratio, aligned=False)
            result[idx_in_level] = result_idx_in_level.to(result.dtype)
        return result


class TwoMLPHead(nn.Module):
    def __init__(self, in_channels, representation_size):
        super().__init__()
        self.fc6 = nn.Linear(in_channels, representation_size)
        self.fc7 = nn.Linear(representation_size, representation_size)

    def forward(self, x):
        x = x.flatten(start_dim=1)
        x = F.relu(self.fc6(x))
        x = F.relu(self.fc7(x))
        return x


class FastRCNNPredictor(nn.Module):
    def __init__(self, in_channels, num_classes):
        super().__init__()
        self.cls_score = nn.Linear(in_channels, num_classes)
        self.bbox_pred = nn.Linear(in_channels, num_classes * 4)

    def forward(self, x):
        if x.dim() == 4:
            torch._assert(list(x.shape[2:]) == [1, 1],
                          f"x has the wrong shape, expecting the last two dimensions to be [1,1] instead of {list(x.shape[2:])}")  # noqa: E501
        x = x.flatten(start_dim=1)
        scores = self.cls_score(x)
        bbox_deltas = self.bbox_pred(x)
        return scores, bbox_deltas


class BoxCoder:
    def __init__(self, weights, bbox_xform_clip=math.log(1000.0 / 16)):
        self.weights = weights
        self.bbox_xform_clip = bbox_xform_clip

    def encode_single(self, reference_boxes, proposals):
        wx, wy, ww, wh = self.weights
        ex_widths = proposals[:, 2] - proposals[:, 0]
        ex_heights = proposals[:, 3] - proposals[:, 1]
        ex_ctr_x = proposals[:, 0] + 0.5 * ex_widths
        ex_ctr_y = proposals[:, 1] + 0.5 * ex_heights
        gt_widths = reference_boxes[:, 2] - reference_boxes[:, 0]
        gt_heights = reference_boxes[:, 3] - reference_boxes[:, 1]
        gt_ctr_x = reference_boxes[:, 0] + 0.5 * gt_widths
        gt_ctr_y = reference_boxes[:, 1] + 0.5 * gt_heights
        targets_dx = wx * (gt_ctr_x - ex_ctr_x) / ex_widths
        targets_dy = wy * (gt_ctr_y - ex_ctr_y) / ex_heights
        targets_dw = ww * torch.log(gt_widths / ex_widths)
        targets_dh = wh * torch.log(gt_heights / ex_heights)
        return torch.stack((targets_dx, targets_dy, targets_dw, targets_dh), dim=1)

    def decode_single(self, rel_codes, boxes):
        boxes = boxes.to(rel_codes.dtype)
        widths = boxes[:, 2] - boxes[:, 0]
        heights = boxes[:, 3] - boxes[:, 1]
        ctr_x = boxes[:, 0] + 0.5 * widths
        ctr_y = boxes[:, 1] + 0.5 * heights
        wx, wy, ww, wh = self.weights
        dx = rel_codes[:, 0::4] / wx
        dy = rel_codes[:, 1::4] / wy
        dw = rel_codes[:, 2::4] / ww
        dh = rel_codes[:, 3::4] / wh
        dw = torch.clamp(dw, max=self.bbox_xform_clip)
        dh = torch.clamp(dh, max=self.bbox_xform_clip)
        pred_ctr_x = dx * widths[:, None] + ctr_x[:, None]
        pred_ctr_y = dy * heights[:, None] + ctr_y[:, None]
        pred_w = torch.exp(dw) * widths[:, None]
        pred_h = torch.exp(dh) * heights[:, None]
        c_to_c_h = torch.tensor(0.5, dtype=pred_ctr_y.dtype) * pred_h
        c_to_c_w = torch.tensor(0.5, dtype=pred_ctr_x.dtype) * pred_w
        pred_boxes1 = pred_ctr_x - c_to_c_w
        pred_boxes2 = pred_ctr_y - c_to_c_h
        pred_boxes3 = pred_ctr_x + c_to_c_w
        pred_boxes4 = pred_ctr_y + c_to_c_h
        return torch.stack((pred_boxes1, pred_boxes2, pred_boxes3, pred_boxes4), dim=2).flatten(1)

    def decode(self, rel_codes, boxes):
        boxes_per_image = [b.size(0) for b in boxes]
        concat_boxes = torch.cat(boxes, dim=0)
        box_sum = sum(boxes_per_image)
        if box_sum > 0:
            rel_codes = rel_codes.reshape(box_sum, -1)
        pred_boxes = self.decode_single(rel_codes, concat_boxes)
        if box_sum > 0:
            pred_boxes = pred_boxes.reshape(box_sum, -1, 4)
        return pred_boxes


def fastrcnn_loss(class_logits, box_regression, labels, regression_targets):
    labels = torch.cat(labels, dim=0)
    regression_targets = torch.cat(regression_targets, dim=0)
    classification_loss = F.cross_entropy(class_logits, labels)
    pos_inds = torch.where(labels > 0)[0]
    labels_pos = labels[pos_inds]
    N, num_classes = class_logits.shape
    box_regression = box_regression.reshape(N, box_regression.size(-1) // 4, 4)
    box_loss = F.smooth_l1_loss(box_regression[pos_inds, labels_pos], regression_targets[pos_inds],
                                beta=1 / 9, reduction="sum")
    box_loss = box_loss / labels.numel()
    return classification_loss, box_loss


def clip_boxes_to_image(boxes, size):
    dim = boxes.dim()
    boxes_x = boxes[..., 0::2]
    boxes_y = boxes[..., 1::2]
    height, width = size
    boxes_x = boxes_x.clamp(min=0, max=width)
    boxes_y = boxes_y.clamp(min=0, max=height)
    clipped_boxes = torch.stack((boxes_x, boxes_y), dim=dim)
    return clipped_boxes.reshape(boxes.shape)


def remove_small_boxes(boxes, min_size):
    ws, hs = boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]
    keep = (ws >= min_size) & (hs >= min_size)
    return torch.where(keep)[0]


def box_iou(boxes1, boxes2):
    area1 = box_area(boxes1)
    area2 = box_area(boxes2)
    lt = torch.max(boxes1[:, None, :2], boxes2[:, :2])
    rb = torch.min(boxes1[:, None, 2:], boxes2[:, 2:])
    wh = (rb - lt).clamp(min=0)
    inter = wh[:, :, 0] * wh[:, :, 1]
    return inter / (area1[:, None] + area2 - inter)


def nms(boxes, scores, iou_threshold):
    order = scores.argsort(descending=True)
    keep = []
    suppressed = torch.zeros(len(boxes), dtype=torch.bool)
    ious = box_iou(boxes, boxes)
    for i in order.tolist():
        if suppressed[i]:
            continue
        keep.append(i)
        suppressed |= ious[i] > iou_threshold
    return torch.tensor(keep, dtype=torch.int64)


def batched_nms(boxes, scores, idxs, iou_threshold):
    if boxes.numel() == 0:
        return torch.empty((0,), dtype=torch.int64)
    max_coordinate = boxes.max()
    offsets = idxs.to(boxes) * (max_coordinate + torch.tensor(1).to(boxes))
    boxes_for_nms = boxes + offsets[:, None]
    return nms(boxes_for_nms, scores, iou_threshold)


def postprocess_detections(box_coder, class_logits, box_regression, proposals, image_shapes,
                           score_thresh=0.05, nms_thresh=0.5, detections_per_img=5):
    num_classes = class_logits.shape[-1]
    boxes_per_image = [boxes_in_image.shape[0] for boxes_in_image in proposals]
    pred_boxes = box_coder.decode(box_regression, proposals)
    pred_scores = F.softmax(class_logits, -1)
    pred_boxes_list = pred_boxes.split(boxes_per_image, 0)
    pred_scores_list = pred_scores.split(boxes_per_image, 0)
    all_boxes, all_scores, all_labels = [], [], []
    for boxes, scores, image_shape in zip(pred_boxes_list, pred_scores_list, image_shapes):
        boxes = clip_boxes_to_image(boxes, image_shape)
        labels = torch.arange(num_classes)
        labels = labels.view(1, -1).expand_as(scores)
        boxes = boxes[:, 1:]
        scores = scores[:, 1:]
        labels = labels[:, 1:]
        boxes = boxes.reshape(-1, 4)
        scores = scores.reshape(-1)
        labels = labels.reshape(-1)
        inds = torch.where(scores > score_thresh)[0]
        boxes, scores, labels = boxes[inds], scores[inds], labels[inds]
        keep = remove_small_boxes(boxes, min_size=1e-2)
        boxes, scores, labels = boxes[keep], scores[keep], labels[keep]
        keep = batched_nms(boxes, scores, labels, nms_thresh)
        keep = keep[:detections_per_img]
        boxes, scores, labels = boxes[keep], scores[keep], labels[keep]
        all_boxes.append(boxes)
        all_scores.append(scores)
        all_labels.append(labels)
    return all_boxes, all_scores, all_labels


torch.manual_seed(0)
feat = torch.arange(2 * 3 * 8 * 8, dtype=torch.float32).reshape(2, 3, 8, 8) / 50.0
rois = torch.tensor([[0, 1.0, 1.0, 5.0, 6.0], [1, 0.5, 2.0, 7.5, 7.0], [0, 3.0, 3.0, 3.5, 3.2]])
for sr, aligned in [(2, False), (-1, False), (2, True), (0, True)]:
    out = roi_align(feat, rois, (2, 2), spatial_scale=1.0, sampling_ratio=sr, aligned=aligned)
    print("roi_align", sr, aligned, out.shape, out[:, 0].flatten().tolist())

features = {"0": torch.randn(2, 4, 16, 16, requires_grad=True),
            "1": torch.randn(2, 4, 8, 8, requires_grad=True),
            "pool": torch.randn(2, 4, 4, 4)}
proposals = [torch.tensor([[2.0, 2.0, 10.0, 12.0], [0.0, 0.0, 30.0, 28.0], [5.0, 4.0, 9.0, 7.0]]),
             torch.tensor([[1.0, 3.0, 20.0, 21.0], [8.0, 8.0, 12.0, 30.0]])]
image_shapes = [(32, 32), (30, 31)]
pooler = MultiScaleRoIAlign(["0", "1"], output_size=3, sampling_ratio=2)
pooled = pooler(features, proposals, image_shapes)
print("pooled", pooled.shape, pooled.sum().item(), pooled[0, 0])
head = TwoMLPHead(4 * 3 * 3, 16)
predictor = FastRCNNPredictor(16, 3)
print(head, predictor, sep="\n")
box_features = head(pooled)
class_logits, box_regression = predictor(box_features)
print("logits", class_logits.shape, box_regression.shape)
try:
    predictor(torch.randn(2, 16, 2, 2))
except Exception as e:
    print(type(e).__name__, e)

coder = BoxCoder((10.0, 10.0, 5.0, 5.0))
gt = [torch.tensor([[3.0, 2.0, 11.0, 13.0], [1.0, 1.0, 29.0, 26.0], [5.0, 5.0, 9.0, 8.0]]),
      torch.tensor([[0.0, 2.0, 22.0, 20.0], [9.0, 6.0, 13.0, 29.0]])]
targets = [coder.encode_single(g, p) for g, p in zip(gt, proposals)]
print("targets", torch.cat(targets).round(decimals=4))
labels = [torch.tensor([1, 2, 0]), torch.tensor([2, 1])]
cls_loss, box_loss = fastrcnn_loss(class_logits, box_regression, labels, targets)
print("losses", cls_loss.item(), box_loss.item())
(cls_loss + box_loss).backward()
print("grads", features["0"].grad.abs().sum().item(), features["1"].grad.abs().sum().item(),
      predictor.bbox_pred.weight.grad.norm().item(), head.fc6.weight.grad.norm().item())
decoded = coder.decode(torch.cat(targets).repeat(1, 3).detach(), proposals)
print("decoded", decoded.shape, torch.allclose(decoded[:, 0], torch.cat(gt), atol=1e-4))
with torch.no_grad():
    boxes, scores, labs = postprocess_detections(coder, class_logits * 3, box_regression,
                                                 proposals, image_shapes, score_thresh=0.2)
for b, s, lab in zip(boxes, scores, labs):
    print("det", b.round(decimals=3).tolist(), s.round(decimals=4).tolist(), lab.tolist())
