#!/usr/bin/env python3
"""Usage: fold_bn.py NET.dfl > FOLDED.dfl

Writes a DFL network with its batch norms folded into their producers, as
torch.onnx exports a model in eval mode (the BN's scale and shift become the
conv's weights and bias, no node of their own): each `A = batchnorm(B);` is
dropped and A renamed B wherever it is read. The ONNX twins of the stdlib's
networks with folded BN (make_models.py) import as this network."""
import re
import sys

text = open(sys.argv[1]).read()
bn = re.compile(r"^\s*(\w+) = batchnorm\((\w+)\);[^\n]*\n", re.M)
alias = dict(bn.findall(text))
for a in alias:   # a batch norm of a batch norm's alias: the first producer
    while alias[a] in alias:
        alias[a] = alias[alias[a]]
text = bn.sub("", text)
if alias:
    text = re.sub(r"\b(" + "|".join(map(re.escape, alias)) + r")\b", lambda m: alias[m.group(1)], text)
sys.stdout.write(text)
