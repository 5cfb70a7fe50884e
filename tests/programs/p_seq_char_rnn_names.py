"""NLP From Scratch: classifying names with a character-level RNN (hand-written RNN cell of
nn.Linear + LogSoftmax, NLLLoss, manual SGD), plus the generating-names variant, shrunk."""
import importlib
import math
import os
import string

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn

all_letters = string.ascii_letters + " .,;'"
n_letters = len(all_letters)
category_lines = {
    "English": ["Smith", "Jones", "Brown", "Taylor"],
    "French": ["Dubois", "Laurent", "Moreau"],
    "Italian": ["Rossi", "Bianchi", "Romano", "Esposito"],
}
all_categories = list(category_lines)
n_categories = len(all_categories)


def letterToIndex(letter):
    return all_letters.find(letter)


def letterToTensor(letter):
    tensor = torch.zeros(1, n_letters)
    tensor[0][letterToIndex(letter)] = 1
    return tensor


def lineToTensor(line):
    tensor = torch.zeros(len(line), 1, n_letters)
    for li, letter in enumerate(line):
        tensor[li][0][letterToIndex(letter)] = 1
    return tensor


print(letterToTensor('J'))
print(lineToTensor('Jones').size())


class RNN(nn.Module):
    def __init__(self, input_size, hidden_size, output_size):
        super(RNN, self).__init__()
        self.hidden_size = hidden_size
        self.i2h = nn.Linear(input_size + hidden_size, hidden_size)
        self.i2o = nn.Linear(input_size + hidden_size, output_size)
        self.softmax = nn.LogSoftmax(dim=1)

    def forward(self, input, hidden):
        combined = torch.cat((input, hidden), 1)
        hidden = self.i2h(combined)
        output = self.i2o(combined)
        output = self.softmax(output)
        return output, hidden

    def initHidden(self):
        return torch.zeros(1, self.hidden_size)


torch.manual_seed(0)
n_hidden = 32
rnn = RNN(n_letters, n_hidden, n_categories)
print(rnn)
input = letterToTensor('A')
hidden = torch.zeros(1, n_hidden)
output, next_hidden = rnn(input, hidden)
print(output)


def categoryFromOutput(output):
    top_n, top_i = output.topk(1)
    category_i = top_i[0].item()
    return all_categories[category_i], category_i


print(categoryFromOutput(output))

criterion = nn.NLLLoss()
learning_rate = 0.005


def train(category_tensor, line_tensor):
    hidden = rnn.initHidden()
    rnn.zero_grad()
    for i in range(line_tensor.size()[0]):
        output, hidden = rnn(line_tensor[i], hidden)
    loss = criterion(output, category_tensor)
    loss.backward()
    for p in rnn.parameters():
        p.data.add_(p.grad.data, alpha=-learning_rate)
    return output, loss.item()


pairs = [(c, line) for c in all_categories for line in category_lines[c]]
for it in range(1, 25):
    category, line = pairs[int(torch.randint(len(pairs), (1,)))]
    category_tensor = torch.tensor([all_categories.index(category)], dtype=torch.long)
    line_tensor = lineToTensor(line)
    output, loss = train(category_tensor, line_tensor)
    if it % 6 == 0:
        guess, guess_i = categoryFromOutput(output)
        correct = '✓' if guess == category else '✗ (%s)' % category
        print('%d %d%% %.4f %s / %s %s' % (it, it / 24 * 100, loss, line, guess, correct))

confusion = torch.zeros(n_categories, n_categories)
with torch.no_grad():
    for category, line in pairs:
        hidden = rnn.initHidden()
        lt = lineToTensor(line)
        for i in range(lt.size()[0]):
            output, hidden = rnn(lt[i], hidden)
        guess, guess_i = categoryFromOutput(output)
        confusion[all_categories.index(category)][guess_i] += 1
for i in range(n_categories):
    confusion[i] = confusion[i] / confusion[i].sum()
print(confusion)


def predict(input_line, n_predictions=3):
    print('\n> %s' % input_line)
    with torch.no_grad():
        hidden = rnn.initHidden()
        lt = lineToTensor(input_line)
        for i in range(lt.size()[0]):
            output, hidden = rnn(lt[i], hidden)
        topv, topi = output.topk(n_predictions, 1, True)
        for i in range(n_predictions):
            value = topv[0][i].item()
            category_index = topi[0][i].item()
            print('(%.4f) %s' % (value, all_categories[category_index]))


predict('Dovesky')
predict('Satoshi')


# Generating names: the conditional RNN with dropout and o2o.
class GenRNN(nn.Module):
    def __init__(self, input_size, hidden_size, output_size):
        super(GenRNN, self).__init__()
        self.hidden_size = hidden_size
        self.i2h = nn.Linear(n_categories + input_size + hidden_size, hidden_size)
        self.i2o = nn.Linear(n_categories + input_size + hidden_size, output_size)
        self.o2o = nn.Linear(hidden_size + output_size, output_size)
        self.dropout = nn.Dropout(0.1)
        self.softmax = nn.LogSoftmax(dim=1)

    def forward(self, category, input, hidden):
        input_combined = torch.cat((category, input, hidden), 1)
        hidden = self.i2h(input_combined)
        output = self.i2o(input_combined)
        output_combined = torch.cat((hidden, output), 1)
        output = self.o2o(output_combined)
        output = self.dropout(output)
        output = self.softmax(output)
        return output, hidden

    def initHidden(self):
        return torch.zeros(1, self.hidden_size)


n_out = n_letters + 1


def categoryTensor(category):
    li = all_categories.index(category)
    tensor = torch.zeros(1, n_categories)
    tensor[0][li] = 1
    return tensor


def targetTensor(line):
    letter_indexes = [all_letters.find(line[li]) for li in range(1, len(line))]
    letter_indexes.append(n_out - 1)
    return torch.LongTensor(letter_indexes)


gen = GenRNN(n_letters, 24, n_out)
print(gen)
total = 0
for it in range(6):
    category, line = pairs[it * 2]
    cat_t, in_t, tgt = categoryTensor(category), lineToTensor(line), targetTensor(line)
    tgt.unsqueeze_(-1)
    hidden = gen.initHidden()
    gen.zero_grad()
    loss = torch.Tensor([0])
    for i in range(in_t.size(0)):
        output, hidden = gen(cat_t, in_t[i], hidden)
        l = criterion(output, tgt[i])  # noqa: E741  (as the tutorial)
        loss += l
    loss.backward()
    for p in gen.parameters():
        p.data.add_(p.grad.data, alpha=-0.0005)
    total += loss.item() / in_t.size(0)
    print(f"{it} {loss.item() / in_t.size(0):.4f} {type(loss.grad_fn).__name__}")

gen.eval()
with torch.no_grad():
    cat_t = categoryTensor('Italian')
    inp = lineToTensor('R')
    hidden = gen.initHidden()
    name = 'R'
    for i in range(6):
        output, hidden = gen(cat_t, inp[0], hidden)
        topv, topi = output.topk(1)
        topi = topi[0][0]
        if topi == n_out - 1:
            break
        name += all_letters[topi]
        inp = lineToTensor(all_letters[topi])
print(name)
print("RESULT:", f"{total:.4f}", math.isfinite(total))
