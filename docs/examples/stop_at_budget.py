#!/usr/bin/env python3
"""Stop a training loop before it spends more than its privacy budget.

A toy DP-SGD loop (a line fitted to noisy points, its clipped gradients
noised as DP-SGD noises them) asks one dpbudget process, kept open for the
whole run, what epsilon the run would have after the next epoch, and stops
before an epoch that would take epsilon past BUDGET. The process answers each
line of its standard input as it is read (`dpbudget sweep --input - --format
jsonl`, docs/guide.md#asking-as-training-goes), in milliseconds.

Standard library only. Usage: stop_at_budget.py [DPBUDGET]   (default: dpbudget)
It prints one line per epoch and a last line, a JSON object:
{"epochs": E, "steps": T, "epsilon": ...,  "next_epsilon": ...}.
"""
import json
import random
import subprocess
import sys

BUDGET = 8.0  # epsilon the run may spend
DELTA = 1e-5
SAMPLING_RATE = 0.01  # Poisson sampling: each record is in a batch with probability q
NOISE_MULTIPLIER = 0.8  # sigma: noise deviation / clipping norm
STEPS_PER_EPOCH = 100  # 1 / q: one pass over the data in expectation
MAX_EPOCHS = 1000  # the loop's own limit; the budget stops it first
ACCOUNTANT = "pld"  # the tightest sound upper bound (docs/guide.md)


class PrivacyBudget:
    """One dpbudget process, asked one JSON line per question."""

    def __init__(self, dpbudget):
        self.process = subprocess.Popen(
            [dpbudget, "sweep", "--input", "-", "--format", "jsonl",
             "--accountant", ACCOUNTANT, "--delta", str(DELTA)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)

    def epsilon(self, steps):
        """Epsilon after `steps` steps: one line out, its one answer back."""
        question = {"sampling_rate": SAMPLING_RATE,
                    "noise_multiplier": NOISE_MULTIPLIER, "steps": steps}
        self.process.stdin.write(json.dumps(question) + "\n")
        self.process.stdin.flush()
        answer = self.process.stdout.readline()
        if not answer:  # the process ended: its message is on stderr
            raise RuntimeError("dpbudget ended with status %d" % self.process.wait())
        row = json.loads(answer)
        if "error" in row:
            raise ValueError(row["error"])
        return row["epsilon"]

    def close(self):
        self.process.stdin.close()
        return self.process.wait()


def train_one_epoch(model, data, rng):
    """STEPS_PER_EPOCH steps of DP-SGD on y = a x + b: Poisson batches, each
    example's gradient clipped to norm 1, Gaussian noise of deviation sigma."""
    a, b = model
    rate = 0.05
    for _ in range(STEPS_PER_EPOCH):
        batch = [p for p in data if rng.random() < SAMPLING_RATE]
        ga = gb = 0.0
        for x, y in batch:
            da, db = 2 * (a * x + b - y) * x, 2 * (a * x + b - y)
            norm = max(1.0, (da * da + db * db) ** 0.5)
            ga, gb = ga + da / norm, gb + db / norm
        ga += rng.gauss(0, NOISE_MULTIPLIER)
        gb += rng.gauss(0, NOISE_MULTIPLIER)
        expected = SAMPLING_RATE * len(data)
        a, b = a - rate * ga / expected, b - rate * gb / expected
    return a, b


def main():
    rng = random.Random(46)
    data = [(x, 2 * x + 1 + rng.gauss(0, 0.1))
            for x in (rng.uniform(-1, 1) for _ in range(1000))]
    budget = PrivacyBudget(sys.argv[1] if len(sys.argv) > 1 else "dpbudget")
    model, epochs, spent = (0.0, 0.0), 0, 0.0
    while epochs < MAX_EPOCHS:
        # Ask before spending: the epoch runs only if its end fits the budget.
        after = budget.epsilon((epochs + 1) * STEPS_PER_EPOCH)
        if after > BUDGET:
            break
        model = train_one_epoch(model, data, rng)
        epochs, spent = epochs + 1, after
        print("epoch %d: epsilon %.4f, a %.3f, b %.3f" % (epochs, spent, *model))
    status = budget.close()
    print(json.dumps({"epochs": epochs, "steps": epochs * STEPS_PER_EPOCH,
                      "epsilon": spent, "next_epsilon": after}))
    return status


if __name__ == "__main__":
    sys.exit(main())
