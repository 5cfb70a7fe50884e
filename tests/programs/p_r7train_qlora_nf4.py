"""QLoRA-style 4-bit NormalFloat fine-tuning in pure tensor ops, shrunk from pytorch/ao's
torchao/dtypes/nf4tensor.py (the NF4 code table, ``get_block_absmax``, double quantization of
the block scalers to int8 with a mean offset, ``convert_to_norm_float_weight`` with nearest-code
search and two 4-bit codes packed per uint8, ``get_original_weight`` unpacking with ``>>`` and
``& 0b1111``, ``linear_nf4`` as a custom autograd Function that dequantizes in backward) and
torchtune's LoRALinear on top of it (frozen NF4 base, lora_a kaiming_uniform_, lora_b zeros,
alpha/rank scaling, dropout), trained a few AdamW steps on synthetic data, plus the merged
weight and its quantization error."""
# ruff: noqa: E501  (upstream's own line lengths, kept)
import importlib
import math
import os

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = torch.nn
F = importlib.import_module(LIB + ".nn.functional")

NF4 = torch.tensor([
    -1.0, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453, -0.28444138169288635,
    -0.18477343022823334, -0.09105003625154495, 0.0, 0.07958029955625534, 0.16093020141124725,
    0.2461123913526535, 0.33791524171829224, 0.44070982933044434, 0.5626170039176941,
    0.7229568362236023, 1.0,
])


def get_block_absmax(inpt_tensor, block_size):
    """Iterate through a flattened tensor getting the absmax scalers for each block"""
    assert inpt_tensor.dim() == 1, "Input tensor must be flattened"
    assert (inpt_tensor.numel() % block_size) == 0, (
        f"Input tensor must be divisible by block size, got {inpt_tensor.numel()} and {block_size}")
    n_blocks = inpt_tensor.numel() // block_size
    blocks = inpt_tensor.view(n_blocks, block_size)
    block_scalers = blocks.abs().max(dim=1).values
    return block_scalers


class NF4Weight:
    """The parts of torchao's NF4Tensor a frozen base weight needs (a plain container here)."""

    def __init__(self, inpt_tensor, block_size=16, scaler_block_size=4):
        assert inpt_tensor.dtype is torch.bfloat16
        self.shape, self.dtype = inpt_tensor.shape, inpt_tensor.dtype
        self.block_size, self.scaler_block_size = block_size, scaler_block_size
        self.n_blocks = inpt_tensor.numel() // block_size
        (self.quantized_scalers, self.quantization_factor,
         self.scaler_mean) = self.double_quantize_scalers(inpt_tensor.flatten(), block_size,
                                                           scaler_block_size)
        self.quantized_data = self.convert_to_norm_float_weight(inpt_tensor, self.n_blocks,
                                                                block_size, NF4)
        self.nf4 = NF4

    @staticmethod
    def double_quantize_scalers(input_tensor, block_size, scaler_block_size):
        """Used to achieve the double quantization of the scalers. int8 with a per-block
        quantization factor, around the mean of all scalers."""
        assert input_tensor.dim() == 1, "Input tensor must be flattened"
        # First round of quantization
        scalers_1 = get_block_absmax(input_tensor, block_size)
        # Second round of quantization
        scalers_1_mean = scalers_1.mean()
        scalers_1 = scalers_1 - scalers_1_mean
        n_scaler_blocks = scalers_1.numel() // scaler_block_size
        scaler_blocks = scalers_1.view(n_scaler_blocks, scaler_block_size)

        scaler_absmax = get_block_absmax(scalers_1, scaler_block_size)
        scaler_absmax = scaler_absmax.unsqueeze(-1).expand(n_scaler_blocks, scaler_block_size)

        quantization_factor = 256 / (2 * scaler_absmax)
        # Length appropriate in case of all zeros
        quantization_factor[scaler_absmax == 0] = 1
        quantized_scaler_blocks = scaler_blocks * quantization_factor
        quantized_scaler_blocks = quantized_scaler_blocks.round()
        quantized_scaler_blocks = quantized_scaler_blocks.clamp(-128, 127)

        # This is needed to make sure that quantization_factor remains a repeated view of n_scaler_blocks
        quantization_factor = quantization_factor[:, 0]

        return (quantized_scaler_blocks.flatten().to(torch.int8),
                quantization_factor.view(n_scaler_blocks), scalers_1_mean)

    def dequantize_scalers(self, input_tensor, quantization_factor, scaler_block_size):
        """Used to unpack the double quantized scalers"""
        assert input_tensor.dim() == 1, "Input tensor must be flattened"
        n_scaler_blocks = input_tensor.numel() // scaler_block_size
        input_tensor = input_tensor.view(n_scaler_blocks, scaler_block_size)
        dequantized = (input_tensor / quantization_factor.unsqueeze(-1)).flatten().to(
            self.dtype) + self.scaler_mean
        return dequantized

    @staticmethod
    def convert_to_norm_float_weight(input_tensor, n_blocks, block_size, nf4):
        """Convert a tensor to the normalized float weight format"""
        flattened_tensor = input_tensor.flatten()
        #  Since we are using uint8 we will encode 2 entries per byte
        numel = input_tensor.numel()
        assert numel % 2 == 0, "Number of elements must be even just to not have to think about the end"
        # Reshape the flattened tensor into blocks of size self.block_size
        blocks = flattened_tensor.view(n_blocks, block_size)

        # Scale the blocks
        scalers = get_block_absmax(input_tensor.flatten(), block_size)
        scales = scalers.unsqueeze(-1).expand(n_blocks, block_size)
        scaled_blocks = blocks / scales

        # Returns a flattened tensor with each element quantized to nf4 index
        quantized_blocks = NF4Weight.quantize_tensor_nearest(scaled_blocks.flatten(), nf4)

        # Combine the quantized elements into uint8 values
        # This lays out two consecutive elements in the same byte
        # [a, b, c, d] -> [ab, cd]
        # The size of combined blocks will be half the size of the original tensor
        combined_blocks = quantized_blocks[::2] << 4 | quantized_blocks[1::2]

        return combined_blocks.to(torch.uint8)

    @staticmethod
    def quantize_tensor_nearest(value, nf4):
        """Quantize a float16 tensor to nf4 format to nearest and not rounded up"""
        value = value.unsqueeze(-1)  # (numel, 1)
        # Compare the value tensor with the nf4 tensor element-wise
        diff = torch.abs(value - nf4)
        closest_nf4 = diff.min(dim=-1).indices
        return closest_nf4

    @staticmethod
    def dequantize(value, nf4):
        """Dequantize a nf4 value to bfloat16 format"""
        # return nf4.index_select(0, value)
        return nf4[value]

    def get_original_weight(self):
        """Get the original weight from the normalized float weight format"""
        # Since we are using uint8 we will decode 2 entries per byte
        # Shift elements down 4 and select out the bottom 4 bits
        first_elements = (self.quantized_data >> 4).to(torch.long)
        second_elements = (self.quantized_data & 0b1111).to(torch.long)

        # Dequantize every element
        dequantized_first = self.dequantize(first_elements, self.nf4)
        dequantized_second = self.dequantize(second_elements, self.nf4)

        # Build up matrix of scalers repeated for each element in the block
        # Since first and second elements make up a full block
        # we expand out to half the size of the full block
        scalers = self.dequantize_scalers(self.quantized_scalers, self.quantization_factor,
                                          self.scaler_block_size)
        repeated = scalers.unsqueeze(-1).expand(scalers.size(0), self.block_size // 2)

        scaled_first = dequantized_first * repeated.flatten()
        scaled_second = dequantized_second * repeated.flatten()

        # Flip them to be vertical and them stack them together horizontally
        # Upon flattening this will interleave the elements
        scaled_first = scaled_first.unsqueeze(-1).transpose(0, 1)
        scaled_second = scaled_second.unsqueeze(-1).transpose(0, 1)
        return torch.stack([scaled_first, scaled_second], dim=-1).reshape(self.shape)


class LinearNF4(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input, weight):
        """Save the quantized nf4 weight for backward pass"""
        ctx.nf4_weight = weight
        return F.linear(input, weight.get_original_weight().to(input.dtype))

    @staticmethod
    def backward(ctx, grad_output):
        """The nf4 weight will never require grad so we can just return the grad_output @ weight.to(grad_output.dtype)"""
        weight = ctx.nf4_weight
        return grad_output @ weight.get_original_weight().to(grad_output.dtype), None


def linear_nf4(input, weight):
    """Apply a linear operation with the NF4Tensor weight"""
    return LinearNF4.apply(input, weight)


class LoRALinear(nn.Module):
    """torchtune's LoRALinear with quantize_base=True (shrunk)."""

    def __init__(self, in_dim, out_dim, rank, alpha, dropout=0.0):
        super().__init__()
        self.in_dim, self.out_dim, self.rank, self.alpha = in_dim, out_dim, rank, alpha
        linear = nn.Linear(in_features=in_dim, out_features=out_dim, bias=False)
        self.weight = NF4Weight(linear.weight.detach().to(torch.bfloat16))
        self.dropout = nn.Dropout(p=dropout) if dropout > 0.0 else nn.Identity()
        self.lora_a = nn.Linear(in_features=in_dim, out_features=rank, bias=False)
        self.lora_b = nn.Linear(in_features=rank, out_features=out_dim, bias=False)
        self.merged = False
        self.initialize_parameters()

    def initialize_parameters(self):
        nn.init.kaiming_uniform_(self.lora_a.weight, a=math.sqrt(5))
        nn.init.zeros_(self.lora_b.weight)

    def forward(self, x):
        out = linear_nf4(input=x, weight=self.weight)
        lora_out = self.lora_a(self.dropout(x))
        lora_out = (self.alpha / self.rank) * self.lora_b(lora_out)
        return out + lora_out


torch.manual_seed(0)
w = torch.randn(8, 16).to(torch.bfloat16)
nf4 = NF4Weight(w)
print("packed", nf4.quantized_data.dtype, tuple(nf4.quantized_data.shape), nf4.quantized_data[:8].tolist())
print("scalers", nf4.quantized_scalers.dtype, nf4.quantized_scalers.tolist())
print("factor", [round(v, 3) for v in nf4.quantization_factor.tolist()], "mean %.5f" % nf4.scaler_mean.item())
deq = nf4.get_original_weight()
print("dequantized", deq.dtype, tuple(deq.shape), "max err %.5f" % (deq.float() - w.float()).abs().max().item())
zeros = NF4Weight(torch.zeros(4, 8, dtype=torch.bfloat16), block_size=8, scaler_block_size=2)
print("all-zero factor", zeros.quantization_factor.tolist())

model = nn.Sequential(LoRALinear(16, 32, rank=4, alpha=8, dropout=0.1), nn.GELU(),
                      LoRALinear(32, 4, rank=2, alpha=4))
trainable = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
print("trainable", [(n, tuple(p.shape)) for n, p in trainable])
g = torch.Generator().manual_seed(1)
x = torch.randn(20, 16, generator=g)
y = torch.randint(0, 3, (20,), generator=g)
opt = torch.optim.AdamW([p for _, p in trainable], lr=1e-2, weight_decay=0.0)
for step in range(5):
    model.train()
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print("step %d loss %.5f grad_a %.6f" % (step, loss.item(), model[0].lora_a.weight.grad.norm().item()))
model.eval()
with torch.no_grad():
    print("eval loss %.5f" % F.cross_entropy(model(x), y).item())
    layer = model[0]
    merged = layer.weight.get_original_weight().float() + (layer.alpha / layer.rank) * layer.lora_b.weight @ layer.lora_a.weight
    print("merged", tuple(merged.shape), "%.5f" % merged.norm().item(),
          "lora delta %.5f" % (layer.lora_b.weight @ layer.lora_a.weight).norm().item())
print(sorted(opt.state_dict()["state"][0]), [n for n, _ in model.named_parameters()])
