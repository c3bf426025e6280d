"""Prints a network of N fc layers with 2^53 MACs each (the most E0308 allows)."""
import sys

n = int(sys.argv[1])
print("network many {")
print("  input d [C=1048576, X=8192, Y=1048576];")
for i in range(n):
    print("  a%d = fc(d, K=1);" % i)
print("}")
