"""MIT 6.S191 (Introduction to Deep Learning) Lab 1, PyTorch edition, shrunk. Part 1
"Intro to PyTorch": 0-d/1-d/2-d/4-d tensors from Python values and range(), indexing, the
add/subtract/multiply func, OurDenseLayer with nn.Parameter, nn.Sequential and the
LinearWithSigmoidActivation / LinearButSometimesIdentity modules, gradients of y = x**2 and the
gradient-descent loop that rebuilds x with torch.tensor([x], requires_grad=True). Part 2 "Music
generation with RNNs": vectorize_string / get_batch over ABC-notation text, the LSTMModel
(nn.Embedding -> batch_first nn.LSTM -> nn.Linear, init_hidden, return_state), compute_loss with
nn.CrossEntropyLoss over flattened logits, train_step with Adam, and generate_text sampling with
torch.multinomial. Two tiny hand-written ABC tunes replace the Irish folk song dataset."""

import importlib
import os

import numpy as np

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = torch.nn

torch.manual_seed(0)
np.random.seed(0)

# ===================== Part 1: Intro to PyTorch =====================
integer = torch.tensor(1234)
decimal = torch.tensor(3.14159265359)
print(f"`integer` is a {integer.ndim}-d Tensor: {integer}")
print(f"`decimal` is a {decimal.ndim}-d Tensor: {decimal}")

fibonacci = torch.tensor([1, 1, 2, 3, 5, 8])
count_to_100 = torch.tensor(range(100))
print(f"`fibonacci` is a {fibonacci.ndim}-d Tensor with shape: {fibonacci.shape}")
print(f"`count_to_100` is a {count_to_100.ndim}-d Tensor with shape: {count_to_100.shape}")

matrix = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
assert isinstance(matrix, torch.Tensor), "matrix must be a torch Tensor object"
assert matrix.ndim == 2
images = torch.zeros(10, 3, 256, 256)
assert isinstance(images, torch.Tensor), "images must be a torch Tensor object"
assert images.ndim == 4, "images must have 4 dimensions"
assert images.shape == (10, 3, 256, 256), "images is incorrect shape"
print(f"images is a {images.ndim}-d Tensor with shape: {images.shape}")

row_vector = matrix[1]
column_vector = matrix[:, 1]
scalar = matrix[0, 1]
print(f"`row_vector`: {row_vector}")
print(f"`column_vector`: {column_vector}")
print(f"`scalar`: {scalar}")

a = torch.tensor(15)
b = torch.tensor(61)
c1 = torch.add(a, b)
c2 = a + b  # PyTorch overrides the "+" operation so that it is able to act on Tensors
print(f"c1: {c1}")
print(f"c2: {c2}")


def func(a, b):
    c = torch.add(a, b)
    d = torch.subtract(b, 1)
    e = torch.multiply(c, d)
    return e


a, b = 1.5, 2.5
e_out = func(a, b)
print(f"e_out: {e_out}")


class OurDenseLayer(torch.nn.Module):
    def __init__(self, num_inputs, num_outputs):
        super(OurDenseLayer, self).__init__()
        # Define and initialize parameters: a weight matrix W and bias b
        # Note that the parameter initialize is random!
        self.W = torch.nn.Parameter(torch.randn(num_inputs, num_outputs))
        self.bias = torch.nn.Parameter(torch.randn(num_outputs))

    def forward(self, x):
        z = torch.matmul(x, self.W) + self.bias
        y = torch.sigmoid(z)
        return y


num_inputs = 2
num_outputs = 3
layer = OurDenseLayer(num_inputs, num_outputs)
x_input = torch.tensor([[1, 2.0]])
y = layer(x_input)
print(f"input shape: {x_input.shape}")
print(f"output shape: {y.shape}")
print(f"output result: {y}")

n_input_nodes = 2
n_output_nodes = 3
model = nn.Sequential(nn.Linear(n_input_nodes, n_output_nodes), nn.Sigmoid())
x_input = torch.tensor([[1, 2.0]])
model_output = model(x_input)
print(f"input shape: {x_input.shape}")
print(f"output shape: {y.shape}")
print(f"output result: {y}")
print(model_output)


class LinearWithSigmoidActivation(nn.Module):
    def __init__(self, num_inputs, num_outputs):
        super(LinearWithSigmoidActivation, self).__init__()
        self.linear = nn.Linear(num_inputs, num_outputs)
        self.activation = nn.Sigmoid()

    def forward(self, inputs):
        linear_output = self.linear(inputs)
        output = self.activation(linear_output)
        return output


n_input_nodes = 2
n_output_nodes = 3
model = LinearWithSigmoidActivation(n_input_nodes, n_output_nodes)
x_input = torch.tensor([[1, 2.0]])
y = model(x_input)
print(f"input shape: {x_input.shape}")
print(f"output shape: {y.shape}")
print(f"output result: {y}")


class LinearButSometimesIdentity(nn.Module):
    def __init__(self, num_inputs, num_outputs):
        super(LinearButSometimesIdentity, self).__init__()
        self.linear = nn.Linear(num_inputs, num_outputs)

    def forward(self, inputs, isidentity=False):
        if isidentity:
            return inputs
        else:
            return self.linear(inputs)


model = LinearButSometimesIdentity(num_inputs=2, num_outputs=3)
x_input = torch.tensor([[1, 2.0]])
out_with_linear = model(x_input)
out_with_identity = model(x_input, isidentity=True)
print(f"input: {x_input}")
print(
    "Network linear output: {}; network identity output: {}".format(
        out_with_linear, out_with_identity
    )
)

x = torch.tensor(3.0, requires_grad=True)
y = x**2
y.backward()  # Compute the gradient
dy_dx = x.grad
print("dy_dx of y=x^2 at x=3.0 is: ", dy_dx)
assert dy_dx == 6.0

x = torch.randn(1)
print("Initializing x={}".format(x.item()))
learning_rate = 1e-2  # Learning rate
history = []
x_f = 4  # Target value
for i in range(500):
    x = torch.tensor([x], requires_grad=True)
    loss = (x - x_f) ** 2
    loss.backward()
    x = x.item() - learning_rate * x.grad
    history.append(x.item())
print(
    "after 500 steps x = {:.6f}, shape {}, history[::100] {}".format(
        history[-1], tuple(x.shape), [round(h, 5) for h in history[::100]]
    )
)

# ===================== Part 2: Music generation =====================
songs = [
    "X:1\nT:Tiny Reel\nM:4/4\nK:D\n|:d2fd AdFA|d2fd e2fe|d2fd AdFA|B2AF E2D2:|",
    "X:2\nT:Small Jig\nM:6/8\nK:G\n|:GAB cBA|GBd g2e|dBG AGF|G3 G3:|",
]
songs_joined = "\n\n".join(songs)
vocab = sorted(set(songs_joined))
print("There are", len(vocab), "unique characters in the dataset")
char2idx = {u: i for i, u in enumerate(vocab)}
idx2char = np.array(vocab)


def vectorize_string(string):
    vectorized_output = np.array([char2idx[char] for char in string])
    return vectorized_output


vectorized_songs = vectorize_string(songs_joined)
print(
    "{} ---- characters mapped to int ----> {}".format(
        repr(songs_joined[:10]), vectorized_songs[:10]
    )
)
assert isinstance(vectorized_songs, np.ndarray), "returned result should be a numpy array"


def get_batch(vectorized_songs, seq_length, batch_size):
    # the length of the vectorized songs string
    n = vectorized_songs.shape[0] - 1
    # randomly choose the starting indices for the examples in the training batch
    idx = np.random.choice(n - seq_length, batch_size)
    input_batch = [vectorized_songs[i : i + seq_length] for i in idx]
    output_batch = [vectorized_songs[i + 1 : i + seq_length + 1] for i in idx]
    # Convert the input and output batches to tensors
    x_batch = torch.tensor(np.array(input_batch), dtype=torch.long)
    y_batch = torch.tensor(np.array(output_batch), dtype=torch.long)
    return x_batch, y_batch


x_batch, y_batch = get_batch(vectorized_songs, seq_length=5, batch_size=1)
for i, (input_idx, target_idx) in enumerate(zip(x_batch[0], y_batch[0])):
    print("Step {:3d}".format(i))
    print("  input: {} ({:s})".format(input_idx, repr(idx2char[input_idx.item()])))
    print("  expected output: {} ({:s})".format(target_idx, repr(idx2char[target_idx.item()])))


class LSTMModel(nn.Module):
    def __init__(self, vocab_size, embedding_dim, hidden_size):
        super(LSTMModel, self).__init__()
        self.hidden_size = hidden_size
        # Define each of the network layers
        # Layer 1: Embedding layer to transform indices into dense vectors
        #   of a fixed embedding size
        self.embedding = nn.Embedding(vocab_size, embedding_dim)
        # Layer 2: LSTM with hidden_size `hidden_size`. note: number of layers defaults to 1.
        self.lstm = nn.LSTM(embedding_dim, hidden_size, batch_first=True)
        # Layer 3: Linear (fully-connected) layer that transforms the LSTM output
        #   into the vocabulary size.
        self.fc = nn.Linear(hidden_size, vocab_size)

    def init_hidden(self, batch_size, device):
        # Initialize hidden state and cell state with zeros
        return (
            torch.zeros(1, batch_size, self.hidden_size).to(device),
            torch.zeros(1, batch_size, self.hidden_size).to(device),
        )

    def forward(self, x, state=None, return_state=False):
        x = self.embedding(x)
        if state is None:
            state = self.init_hidden(x.size(0), x.device)
        out, state = self.lstm(x, state)
        out = self.fc(out)
        return out if not return_state else (out, state)


device = torch.device("cpu")
vocab_size = len(vocab)
embedding_dim = 16
hidden_size = 32
batch_size = 8
model = LSTMModel(vocab_size, embedding_dim, hidden_size)
model.to(device)
print(model)

x, y = get_batch(vectorized_songs, seq_length=20, batch_size=8)
x = x.to(device)
y = y.to(device)
pred = model(x)
print("Input shape:      ", x.shape, " # (batch_size, sequence_length)")
print("Prediction shape: ", pred.shape, "# (batch_size, sequence_length, vocab_size)")

sampled_indices = torch.multinomial(torch.softmax(pred[0], dim=-1), num_samples=1)
sampled_indices = sampled_indices.squeeze(-1).cpu().numpy()
print("Input: \n", repr("".join(idx2char[x[0].cpu()])))
print("Next Char Predictions: \n", repr("".join(idx2char[sampled_indices])))

cross_entropy = nn.CrossEntropyLoss()  # instantiates the function


def compute_loss(labels, logits):
    # Batch the labels so that the shape of the labels should be (B * L,)
    batched_labels = labels.view(-1)
    # Batch the logits so that the shape of the logits should be (B * L, V)
    batched_logits = logits.view(-1, logits.size(-1))
    # Compute the cross-entropy loss using the batched next characters and predictions
    loss = cross_entropy(batched_logits, batched_labels)
    return loss


example_batch_loss = compute_loss(y, pred)
print(f"Prediction shape: {pred.shape} # (batch_size, sequence_length, vocab_size)")
print(f"scalar_loss:      {example_batch_loss.mean().item()}")

params = dict(
    num_training_iterations=60,
    batch_size=8,
    seq_length=24,
    learning_rate=1e-2,
    embedding_dim=16,
    hidden_size=32,
)
model = LSTMModel(vocab_size, params["embedding_dim"], params["hidden_size"])
model.to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=params["learning_rate"])


def train_step(x, y):
    # Set the model's mode to train
    model.train()
    # Zero gradients for every step
    optimizer.zero_grad()
    # Forward pass
    y_hat = model(x)
    # Compute the loss
    loss = compute_loss(y, y_hat)
    # Backward pass
    loss.backward()
    # Update the model parameters
    optimizer.step()
    return loss


history = []
for iter in range(params["num_training_iterations"]):
    # Grab a batch and propagate it through the network
    x_batch, y_batch = get_batch(vectorized_songs, params["seq_length"], params["batch_size"])
    x_batch = x_batch.to(device)
    y_batch = y_batch.to(device)
    # Take a gradient step
    loss = train_step(x_batch, y_batch)
    history.append(loss.item())
    if iter % 10 == 0:
        print("iter %d loss %.5f" % (iter, loss.item()))
print("final loss %.5f" % history[-1])


def generate_text(model, start_string, generation_length=1000):
    # Evaluation step (generating ABC text using the learned RNN model)
    input_idx = [char2idx[s] for s in start_string]
    input_idx = torch.tensor([input_idx], dtype=torch.long).to(device)
    # Initialize the hidden state
    state = model.init_hidden(input_idx.size(0), device)
    # Empty string to store our results
    text_generated = []
    for i in range(generation_length):
        # Evaluate the inputs and generate the next character probabilities
        predictions, state = model(input_idx, state, return_state=True)
        # Remove the batch dimension
        predictions = predictions.squeeze(0)
        # Use a multinomial distribution to sample over the probabilities
        input_idx = torch.multinomial(torch.softmax(predictions, dim=-1), num_samples=1)
        # Add the predicted character to the generated text!
        text_generated.append(idx2char[input_idx].item())
    return start_string + "".join(text_generated)


model.eval()
with torch.no_grad():
    generated_text = generate_text(model, start_string="X", generation_length=80)
print(repr(generated_text))
