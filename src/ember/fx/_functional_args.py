"""How torch's Python ``nn.functional`` functions hand themselves to ``__torch_function__``:
the arguments they pass by position, then by keyword (with their defaults filled in). A traced
``F.relu(x)`` thus records ``relu(x, inplace=False)``, as in torch. Derived from torch 2.13's
``torch/nn/functional.py``."""

SPLIT = {
    "adaptive_avg_pool2d": "input output_size|",
    "adaptive_avg_pool3d": "input output_size|",
    "adaptive_max_pool1d": "input output_size|return_indices",
    "adaptive_max_pool1d_with_indices": "input output_size|return_indices",
    "adaptive_max_pool2d": "input output_size|return_indices",
    "adaptive_max_pool2d_with_indices": "input output_size|return_indices",
    "adaptive_max_pool3d": "input output_size|return_indices",
    "adaptive_max_pool3d_with_indices": "input output_size|return_indices",
    "affine_grid": "theta size|align_corners",
    "alpha_dropout": "input|p training inplace",
    "batch_norm": "input running_mean running_var|weight bias training momentum eps",
    "binary_cross_entropy": "input target|weight size_average reduce reduction",
    "binary_cross_entropy_with_logits": (
        "input target|weight size_average reduce reduction pos_weight"),
    "celu": "input|alpha inplace",
    "cosine_embedding_loss": "input1 input2 target|margin size_average reduce reduction",
    "cross_entropy": (
        "input target|weight size_average ignore_index reduce reduction "
        "label_smoothing"),
    "ctc_loss": "log_probs targets input_lengths target_lengths|blank reduction zero_infinity",
    "dropout": "input|p training inplace",
    "dropout1d": "input|p training inplace",
    "dropout2d": "input|p training inplace",
    "dropout3d": "input|p training inplace",
    "elu": "input|alpha inplace",
    "embedding": "input weight|padding_idx max_norm norm_type scale_grad_by_freq sparse",
    "embedding_bag": (
        "input weight|offsets max_norm norm_type scale_grad_by_freq mode sparse "
        "per_sample_weights include_last_offset padding_idx"),
    "feature_alpha_dropout": "input|p training inplace",
    "fold": "input output_size kernel_size|dilation padding stride",
    "fractional_max_pool2d": (
        "input kernel_size|output_size output_ratio return_indices _random_samples"),
    "fractional_max_pool2d_with_indices": (
        "input kernel_size|output_size output_ratio return_indices _random_samples"),
    "fractional_max_pool3d": (
        "input kernel_size|output_size output_ratio return_indices _random_samples"),
    "fractional_max_pool3d_with_indices": (
        "input kernel_size|output_size output_ratio return_indices _random_samples"),
    "gaussian_nll_loss": "input target var|full eps reduction",
    "glu": "input|dim",
    "grid_sample": "input grid|mode padding_mode align_corners",
    "group_norm": "input num_groups|weight bias eps",
    "gumbel_softmax": "logits|tau hard eps dim",
    "hardsigmoid": "input|inplace",
    "hardswish": "input|inplace",
    "hardtanh": "input|min_val max_val inplace",
    "hinge_embedding_loss": "input target|margin size_average reduce reduction",
    "huber_loss": "input target|reduction delta weight",
    "instance_norm": "input|running_mean running_var weight bias use_input_stats momentum eps",
    "interpolate": "input|size scale_factor mode align_corners recompute_scale_factor antialias",
    "kl_div": "input target|size_average reduce reduction log_target",
    "l1_loss": "input target|size_average reduce reduction",
    "layer_norm": "input normalized_shape|weight bias eps",
    "leaky_relu": "input|negative_slope inplace",
    "linear_cross_entropy": (
        "input linear_weight target|linear_bias weight reduction ignore_index "
        "label_smoothing options"),
    "local_response_norm": "input size|alpha beta k",
    "log_softmax": "input|dim _stacklevel dtype",
    "lp_pool1d": "input norm_type kernel_size|stride ceil_mode",
    "lp_pool2d": "input norm_type kernel_size|stride ceil_mode",
    "lp_pool3d": "input norm_type kernel_size|stride ceil_mode",
    "margin_ranking_loss": "input1 input2 target|margin size_average reduce reduction",
    "max_pool1d": "input kernel_size|stride padding dilation ceil_mode return_indices",
    "max_pool1d_with_indices": (
        "input kernel_size|stride padding dilation ceil_mode return_indices"),
    "max_pool2d": "input kernel_size|stride padding dilation ceil_mode return_indices",
    "max_pool2d_with_indices": (
        "input kernel_size|stride padding dilation ceil_mode return_indices"),
    "max_pool3d": "input kernel_size|stride padding dilation ceil_mode return_indices",
    "max_pool3d_with_indices": (
        "input kernel_size|stride padding dilation ceil_mode return_indices"),
    "max_unpool1d": "input indices kernel_size|stride padding output_size",
    "max_unpool2d": "input indices kernel_size|stride padding output_size",
    "max_unpool3d": "input indices kernel_size|stride padding output_size",
    "mish": "input|inplace",
    "mse_loss": "input target|size_average reduce reduction weight",
    "multi_head_attention_forward": (
        "query key value embed_dim_to_check num_heads in_proj_weight in_proj_bias "
        "bias_k bias_v add_zero_attn dropout_p out_proj_weight out_proj_bias|training "
        "key_padding_mask need_weights attn_mask is_causal use_separate_proj_weight "
        "q_proj_weight k_proj_weight v_proj_weight static_k static_v "
        "average_attn_weights"),
    "multi_margin_loss": "input target|p margin weight size_average reduce reduction",
    "multilabel_margin_loss": "input target|size_average reduce reduction",
    "multilabel_soft_margin_loss": "input target|weight size_average reduce reduction",
    "nll_loss": "input target|weight size_average ignore_index reduce reduction",
    "normalize": "input|p dim eps out",
    "pad": "input pad|mode value",
    "poisson_nll_loss": "input target|log_input full size_average eps reduce reduction",
    "relu": "input|inplace",
    "relu6": "input|inplace",
    "rms_norm": "input normalized_shape|weight eps",
    "rrelu": "input|lower upper training inplace",
    "selu": "input|inplace",
    "silu": "input|inplace",
    "smooth_l1_loss": "input target|size_average reduce reduction beta",
    "soft_margin_loss": "input target|size_average reduce reduction",
    "softmax": "input|dim _stacklevel dtype",
    "softmin": "input|dim _stacklevel dtype",
    "softsign": "input|",
    "tanhshrink": "input|",
    "triplet_margin_loss": (
        "anchor positive negative|margin p eps swap size_average reduce reduction"),
    "triplet_margin_with_distance_loss": (
        "anchor positive negative|distance_function margin swap reduction"),
    "unfold": "input kernel_size|dilation padding stride",
}
