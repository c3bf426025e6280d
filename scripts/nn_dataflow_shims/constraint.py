"""Minimal stand-in for python-constraint's Problem (not in Debian): finite domains,
function constraints over variable tuples, getSolutions() returns every assignment
(dicts) satisfying all constraints -- the same set python-constraint returns, found by
plain backtracking. Only lets nn_dataflow.parser.kapla_cost_model import and run."""


class Problem:
    def __init__(self):
        self._domains = {}
        self._order = []
        self._constraints = []

    def addVariable(self, var, domain):
        if var not in self._domains:
            self._order.append(var)
        self._domains[var] = list(domain)

    def addVariables(self, variables, domain):
        for v in variables:
            self.addVariable(v, domain)

    def addConstraint(self, func, variables=None):
        if variables is None:
            variables = tuple(self._order)
        self._constraints.append((func, tuple(variables)))

    def getSolutions(self):
        order = self._order
        pos = {v: i for i, v in enumerate(order)}
        # A constraint is checked as soon as its last variable is assigned.
        by_last = [[] for _ in order]
        for func, vs in self._constraints:
            by_last[max(pos[v] for v in vs)].append((func, vs))
        sols = []
        assign = {}

        def rec(i):
            if i == len(order):
                sols.append(dict(assign))
                return
            var = order[i]
            for val in self._domains[var]:
                assign[var] = val
                if all(f(*[assign[v] for v in vs]) for f, vs in by_last[i]):
                    rec(i + 1)
            del assign[var]

        rec(0)
        return sols
