"""torchvision.ops / detection utilities written in torch ops: box_area, box_iou, generalized
IoU, NMS loop, batched_nms offset trick, AnchorGenerator with meshgrid, BoxCoder
encode/decode, RoI max pooling via adaptive_max_pool2d, focal loss."""
import importlib
import math
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")


def box_area(boxes):
    return (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])


def _box_inter_union(boxes1, boxes2):
    area1 = box_area(boxes1)
    area2 = box_area(boxes2)
    lt = torch.max(boxes1[:, None, :2], boxes2[:, :2])
    rb = torch.min(boxes1[:, None, 2:], boxes2[:, 2:])
    wh = (rb - lt).clamp(min=0)
    inter = wh[:, :, 0] * wh[:, :, 1]
    union = area1[:, None] + area2 - inter
    return inter, union


def box_iou(boxes1, boxes2):
    inter, union = _box_inter_union(boxes1, boxes2)
    return inter / union


def generalized_box_iou(boxes1, boxes2):
    inter, union = _box_inter_union(boxes1, boxes2)
    iou = inter / union
    lti = torch.min(boxes1[:, None, :2], boxes2[:, :2])
    rbi = torch.max(boxes1[:, None, 2:], boxes2[:, 2:])
    whi = (rbi - lti).clamp(min=0)
    areai = whi[:, :, 0] * whi[:, :, 1]
    return iou - (areai - union) / areai


def box_convert_cxcywh_to_xyxy(boxes):
    cx, cy, w, h = boxes.unbind(-1)
    return torch.stack((cx - 0.5 * w, cy - 0.5 * h, cx + 0.5 * w, cy + 0.5 * h), dim=-1)


def nms(boxes, scores, iou_threshold):
    order = scores.argsort(descending=True)
    keep = []
    while order.numel() > 0:
        i = order[0]
        keep.append(i.item())
        if order.numel() == 1:
            break
        ious = box_iou(boxes[i].unsqueeze(0), boxes[order[1:]]).squeeze(0)
        order = order[1:][ious <= iou_threshold]
    return torch.tensor(keep, dtype=torch.int64)


def batched_nms(boxes, scores, idxs, iou_threshold):
    if boxes.numel() == 0:
        return torch.empty((0,), dtype=torch.int64, device=boxes.device)
    max_coordinate = boxes.max()
    offsets = idxs.to(boxes) * (max_coordinate + torch.tensor(1).to(boxes))
    boxes_for_nms = boxes + offsets[:, None]
    return nms(boxes_for_nms, scores, iou_threshold)


def remove_small_boxes(boxes, min_size):
    ws, hs = boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]
    keep = (ws >= min_size) & (hs >= min_size)
    keep = torch.where(keep)[0]
    return keep


def clip_boxes_to_image(boxes, size):
    dim = boxes.dim()
    boxes_x = boxes[..., 0::2]
    boxes_y = boxes[..., 1::2]
    height, width = size
    boxes_x = boxes_x.clamp(min=0, max=width)
    boxes_y = boxes_y.clamp(min=0, max=height)
    clipped_boxes = torch.stack((boxes_x, boxes_y), dim=dim)
    return clipped_boxes.reshape(boxes.shape)


class AnchorGenerator(nn.Module):
    def __init__(self, sizes=((16, 32),), aspect_ratios=((0.5, 1.0, 2.0),)):
        super().__init__()
        self.sizes = sizes
        self.aspect_ratios = aspect_ratios
        self.cell_anchors = [self.generate_anchors(size, aspect_ratio)
                             for size, aspect_ratio in zip(sizes, aspect_ratios)]

    def generate_anchors(self, scales, aspect_ratios, dtype=torch.float32):
        scales = torch.as_tensor(scales, dtype=dtype)
        aspect_ratios = torch.as_tensor(aspect_ratios, dtype=dtype)
        h_ratios = torch.sqrt(aspect_ratios)
        w_ratios = 1 / h_ratios
        ws = (w_ratios[:, None] * scales[None, :]).view(-1)
        hs = (h_ratios[:, None] * scales[None, :]).view(-1)
        base_anchors = torch.stack([-ws, -hs, ws, hs], dim=1) / 2
        return base_anchors.round()

    def grid_anchors(self, grid_sizes, strides):
        anchors = []
        for size, stride, base_anchors in zip(grid_sizes, strides, self.cell_anchors):
            grid_height, grid_width = size
            stride_height, stride_width = stride
            shifts_x = torch.arange(0, grid_width, dtype=torch.int32) * stride_width
            shifts_y = torch.arange(0, grid_height, dtype=torch.int32) * stride_height
            shift_y, shift_x = torch.meshgrid(shifts_y, shifts_x, indexing="ij")
            shift_x = shift_x.reshape(-1)
            shift_y = shift_y.reshape(-1)
            shifts = torch.stack((shift_x, shift_y, shift_x, shift_y), dim=1)
            anchors.append((shifts.view(-1, 1, 4) + base_anchors.view(1, -1, 4)).reshape(-1, 4))
        return anchors

    def forward(self, image_size, feature_maps):
        grid_sizes = [fm.shape[-2:] for fm in feature_maps]
        strides = [[torch.empty((), dtype=torch.int64).fill_(image_size[0] // g[0]),
                    torch.empty((), dtype=torch.int64).fill_(image_size[1] // g[1])]
                   for g in grid_sizes]
        return torch.cat(self.grid_anchors(grid_sizes, strides))


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
        return torch.stack((pred_boxes1, pred_boxes2, pred_boxes3, pred_boxes4),
                           dim=2).flatten(1)


def roi_pool(features, rois, output_size, spatial_scale):
    out = []
    for roi in rois:
        b = int(roi[0].item())
        x1, y1, x2, y2 = (roi[1:] * spatial_scale).round().long().tolist()
        region = features[b:b + 1, :, y1:y2 + 1, x1:x2 + 1]
        out.append(F.adaptive_max_pool2d(region, output_size))
    return torch.cat(out, 0)


def sigmoid_focal_loss(inputs, targets, alpha=0.25, gamma=2, reduction="none"):
    p = torch.sigmoid(inputs)
    ce_loss = F.binary_cross_entropy_with_logits(inputs, targets, reduction="none")
    p_t = p * targets + (1 - p) * (1 - targets)
    loss = ce_loss * ((1 - p_t) ** gamma)
    if alpha >= 0:
        alpha_t = alpha * targets + (1 - alpha) * (1 - targets)
        loss = alpha_t * loss
    if reduction == "mean":
        loss = loss.mean()
    elif reduction == "sum":
        loss = loss.sum()
    return loss


torch.manual_seed(0)
xy = torch.rand(8, 2) * 40
wh = torch.rand(8, 2) * 20 + 4
boxes = torch.cat([xy, xy + wh], dim=1)
scores = torch.rand(8)
labels = torch.randint(0, 2, (8,))
print(boxes)
print(box_area(boxes))
iou = box_iou(boxes, boxes)
print(iou.diagonal(), iou.shape)
print(generalized_box_iou(boxes[:3], boxes[3:6]))
print(box_convert_cxcywh_to_xyxy(torch.tensor([[10.0, 10.0, 4.0, 6.0]])))
keep = nms(boxes, scores, 0.1)
print("nms keep", keep, keep.dtype)
print("batched keep", batched_nms(boxes, scores, labels, 0.1))
print(batched_nms(torch.zeros(0, 4), torch.zeros(0), torch.zeros(0, dtype=torch.int64), 0.5))
print(remove_small_boxes(boxes, 12.0))
print(clip_boxes_to_image(boxes, (32, 40))[:3])
values, indices = iou.fill_diagonal_(0).max(dim=1)
print(values, indices)

gen = AnchorGenerator()
feat = torch.randn(1, 4, 2, 3)
anchors = gen((32, 48), [feat])
print(gen.cell_anchors[0])
print(anchors.shape, anchors.dtype)
print(anchors[:8])

coder = BoxCoder(weights=(10.0, 10.0, 5.0, 5.0))
props = boxes[:4] + 1.5
codes = coder.encode_single(boxes[:4], props)
print(codes)
dec = coder.decode_single(codes, props)
print(dec.shape, torch.allclose(dec, boxes[:4], atol=1e-4))
big = coder.decode_single(torch.tensor([[0.0, 0.0, 100.0, 100.0]]), props[:1])
print(big)

features = torch.randn(2, 3, 8, 8, requires_grad=True)
rois = torch.tensor([[0, 0.0, 0.0, 15.0, 15.0], [1, 4.0, 2.0, 11.0, 13.0], [0, 2.0, 2.0, 5.0, 5.0]])
pooled = roi_pool(features, rois, (2, 2), 0.5)
print(pooled.shape, pooled.grad_fn.__class__.__name__)
print(pooled[1])
pooled.sum().backward()
print(features.grad.sum(), (features.grad > 0).sum())
o, i = F.adaptive_max_pool2d(features[:1, :1, :5, :7], (2, 3), return_indices=True)
print(o, i)
print(nn.AdaptiveMaxPool2d((None, 2))(features[:, :, :3]).shape)

logits = torch.randn(6, 3, requires_grad=True)
targets = torch.zeros(6, 3)
targets[torch.arange(6), torch.tensor([0, 2, 1, 1, 0, 2])] = 1.0
fl = sigmoid_focal_loss(logits, targets, reduction="mean")
fl.backward()
print(f"focal {fl.item():.6f}", logits.grad[0])
print(F.smooth_l1_loss(codes, torch.zeros_like(codes), beta=1.0 / 9))
print("RESULT:", keep.tolist())
