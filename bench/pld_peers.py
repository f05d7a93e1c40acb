#!/usr/bin/env python3
"""dpbudget's pld accountant beside dp_accounting's PLDAccountant and
prv_accountant, whole processes side by side, over a grid of DP-SGD runs
(issue 45). Speed is never a test: this prints each point's figures and the
grid's median and worst ratio, to be read beside the goals in
docs/guide.md#benchmark.

The peers are not part of dpbudget and are never committed: fetch
google/differential-privacy and microsoft/prv_accountant, check out each
(`git archive HEAD python/dp_accounting | tar x`, `git archive HEAD | tar x`)
and run them with Debian's Python and its python3-numpy, python3-scipy,
python3-attr, python3-mpmath and python3-absl:

  /usr/bin/python3 bench/pld_peers.py --dpbudget build/dpbudget \\
      --dp-accounting DIR/python/dp_accounting --prv DIR [--grid quick|full]
      [--calibration]

Per point: the wall time and peak memory (the child's ru_maxrss) of each
process, dpbudget's certified interval and its width relative to its upper
end, each peer's figure, and whether the peer's figure lies inside
dpbudget's interval (above, inside or below), and whether prv_accountant's
own interval overlaps it. Then, over the
grid: the median and the largest time ratio dpbudget / dp_accounting, and the
points where dpbudget's upper end is above dp_accounting's figure.

With --calibration, the σ for a target ε instead: `dpbudget sigma
--accountant pld` beside dp_accounting's `calibrate_dp_mechanism` with its
PLDAccountant (tolerance 1e-3 in σ), at a few points of the grid, each σ and
the time ratio.
"""
import argparse
import json
import os
import statistics
import sys
import time

DELTA = 1e-6
# dpbudget's default --pld-tolerance: its interval's width relative to the upper end.
TOLERANCE = 1e-3
FULL_GRID = {
    "q": [1e-4, 1e-3, 1e-2, 0.1],
    "steps": [100, 1000, 10_000, 100_000, 1_000_000],
    "sigma": [0.7, 1.0, 2.0],
}
QUICK_GRID = {"q": [1e-4, 1e-3, 1e-2], "steps": [100, 10_000], "sigma": [1.0]}

# Each peer is asked in a fresh Python process, as a user's script would be:
# its import and start-up are part of its time, as dpbudget's are of its own.
DP_ACCOUNTING = """
import sys
sys.path.insert(0, sys.argv[1])
import dp_accounting
from dp_accounting.pld import pld_privacy_accountant
q, sigma, steps, delta = float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
event = dp_accounting.SelfComposedDpEvent(
    dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma)), steps)
accountant = pld_privacy_accountant.PLDAccountant()
accountant.compose(event)
print(accountant.get_epsilon(delta))
"""

DP_ACCOUNTING_SIGMA = """
import sys
sys.path.insert(0, sys.argv[1])
import dp_accounting
from dp_accounting.pld import pld_privacy_accountant
q, steps, eps, delta = float(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
def make_event(sigma):
    return dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma)), steps)
print(dp_accounting.calibrate_dp_mechanism(
    pld_privacy_accountant.PLDAccountant, make_event, eps, delta,
    dp_accounting.LowerEndpointAndGuess(0.1, 1.0), tol=1e-3))
"""
# (q, steps, target ε) of the calibration comparison: the grid's corners where
# DP-SGD is trained (small q, long runs) and the benchmark's usual point.
CALIBRATION_POINTS = [(1e-4, 1_000_000, 1.0), (1e-3, 100_000, 2.0), (1e-2, 10_000, 2.0)]

PRV = """
import sys
sys.path.insert(0, sys.argv[1])
from prv_accountant import PRVAccountant
from prv_accountant.privacy_random_variables import PoissonSubsampledGaussianMechanism
q, sigma, steps, delta = float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
prv = PoissonSubsampledGaussianMechanism(noise_multiplier=sigma, sampling_probability=q)
# Opacus's setting: eps_error 0.01, delta_error delta / 1000.
accountant = PRVAccountant(prvs=prv, max_self_compositions=steps, eps_error=0.01,
                           delta_error=delta / 1000)
low, est, up = accountant.compute_epsilon(delta=delta, num_self_compositions=[steps])
print(low, est, up)
"""


def run_measured(argv):
    """(wall seconds, the child's peak RSS in MiB from wait4, stdout, exit code)."""
    start = time.monotonic()
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        os.dup2(write_fd, 1)
        os.dup2(os.open(os.devnull, os.O_WRONLY), 2)
        try:
            os.execv(argv[0], argv)
        finally:
            os._exit(127)
    os.close(write_fd)
    with os.fdopen(read_fd, "r") as pipe:
        out = pipe.read()
    _, status, usage = os.wait4(pid, 0)
    return time.monotonic() - start, usage.ru_maxrss / 1024.0, out, os.waitstatus_to_exitcode(status)


def where(value, low, up):
    """Where a peer's figure lies against dpbudget's interval [low, up]."""
    if up is None:
        return "-"
    if value > up:
        return "above"
    if value < (low if low is not None else up):
        return "below"
    return "inside"


def dpbudget_point(binary, q, sigma, steps):
    argv = [binary, "epsilon", "--accountant", "pld", "-q", repr(q), "--sigma", repr(sigma),
            "--steps", str(steps), "--delta", repr(DELTA), "--format", "json"]
    seconds, mib, out, code = run_measured(argv)
    if code != 0:
        return seconds, mib, None, None
    row = json.loads(out)["results"][0]
    return seconds, mib, row.get("epsilon_lower"), row["epsilon"]


def peer_point(python, script, path, q, sigma, steps):
    argv = [python, "-c", script, path, repr(q), repr(sigma), str(steps), repr(DELTA)]
    seconds, mib, out, code = run_measured(argv)
    if code != 0 or not out.strip():
        return seconds, mib, None
    return seconds, mib, [float(x) for x in out.split()]


def calibration(args, binary):
    print("\t".join(("q", "steps", "epsilon", "ours_s", "ours_sigma", "dpa_s", "dpa_sigma",
                     "ratio")))
    ratios = []
    for q, steps, eps in CALIBRATION_POINTS:
        argv = [binary, "sigma", "--accountant", "pld", "-q", repr(q), "--steps", str(steps),
                "--epsilon", repr(eps), "--delta", repr(DELTA), "--format", "json"]
        ours_s, _, out, code = run_measured(argv)
        ours = json.loads(out)["results"][0]["noise_multiplier"] if code == 0 else None
        argv = [args.python, "-c", DP_ACCOUNTING_SIGMA, args.dp_accounting, repr(q), str(steps),
                repr(eps), repr(DELTA)]
        dpa_s, _, out, code = run_measured(argv)
        dpa = float(out) if code == 0 and out.strip() else None
        ratio = ours_s / dpa_s if ours is not None and dpa is not None else None
        if ratio is not None:
            ratios.append(ratio)
        print("\t".join(str(x) for x in (
            q, steps, eps, f"{ours_s:.3f}", f"{ours:.6g}" if ours else "failed", f"{dpa_s:.3f}",
            f"{dpa:.6g}" if dpa else "failed", f"{ratio:.3f}" if ratio else "-")), flush=True)
    if ratios:
        print(f"sigma: time ratio dpbudget / dp_accounting over {len(ratios)} points: median "
              f"{statistics.median(ratios):.3f}, largest {max(ratios):.3f}")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dpbudget", required=True)
    parser.add_argument("--dp-accounting", required=True, help="DIR/python/dp_accounting")
    parser.add_argument("--prv", help="a checkout of microsoft/prv_accountant (optional)")
    parser.add_argument("--python", default="/usr/bin/python3")
    parser.add_argument("--grid", choices=["quick", "full"], default="quick")
    parser.add_argument("--calibration", action="store_true",
                        help="sigma for a target epsilon against calibrate_dp_mechanism")
    args = parser.parse_args()
    grid = FULL_GRID if args.grid == "full" else QUICK_GRID
    binary = os.path.abspath(args.dpbudget)
    if args.calibration:
        return calibration(args, binary)

    header = ("q", "sigma", "steps", "ours_s", "ours_MiB", "interval", "width", "dpa_s", "dpa_MiB",
              "dpa_eps", "dpa_where", "ratio", "prv_s", "prv_interval", "prv_overlaps")
    print("\t".join(header))
    ratios, above, wide, heavier = [], [], [], []
    for q in grid["q"]:
        for sigma in grid["sigma"]:
            for steps in grid["steps"]:
                ours_s, ours_mib, low, up = dpbudget_point(binary, q, sigma, steps)
                dpa_s, dpa_mib, dpa = peer_point(args.python, DP_ACCOUNTING, args.dp_accounting,
                                                 q, sigma, steps)
                row = [q, sigma, steps, f"{ours_s:.3f}" if ours_s else "-",
                       f"{ours_mib:.0f}" if ours_mib else "-"]
                if up is None:
                    row += ["failed", "-"]
                else:
                    lower = low if low is not None else up
                    row += [f"[{lower:.6g}, {up:.6g}]", f"{(up - lower) / up:.2e}" if up else "0"]
                    if up and (up - lower) / up > TOLERANCE:
                        wide.append((q, sigma, steps, (up - lower) / up))
                row += [f"{dpa_s:.3f}" if dpa_s else "-", f"{dpa_mib:.0f}" if dpa_mib else "-"]
                if dpa:
                    row += [f"{dpa[0]:.6g}", where(dpa[0], low, up)]
                    if up is not None and up > dpa[0]:
                        above.append((q, sigma, steps, up, dpa[0]))
                else:
                    row += ["failed", "-"]
                if ours_mib and dpa_mib and ours_mib > dpa_mib:
                    heavier.append((q, sigma, steps, ours_mib, dpa_mib))
                if ours_s and dpa_s:
                    ratios.append(ours_s / dpa_s)
                    row.append(f"{ours_s / dpa_s:.3f}")
                else:
                    row.append("-")
                if args.prv:
                    prv_s, _, prv = peer_point(args.python, PRV, args.prv, q, sigma, steps)
                    row += [f"{prv_s:.3f}" if prv_s else "-"]
                    if prv and up is not None:
                        overlaps = prv[0] <= up and (low if low is not None else up) <= prv[2]
                        row += [f"[{prv[0]:.6g}, {prv[2]:.6g}]", "yes" if overlaps else "no"]
                    else:
                        row += ["failed", "-"]
                print("\t".join(str(x) for x in row), flush=True)
    if ratios:
        print(f"time ratio dpbudget / dp_accounting over {len(ratios)} points: median "
              f"{statistics.median(ratios):.3f}, largest {max(ratios):.3f}")
    for q, sigma, steps, up, peer in above:
        excess = (up - peer) / peer
        verdict = "within" if excess <= TOLERANCE else "BEYOND"
        print(f"upper end above dp_accounting's figure: q {q} sigma {sigma} steps {steps}: "
              f"{up:.6g} > {peer:.6g} by {excess:.2e} relative ({verdict} the tolerance "
              f"{TOLERANCE:g})")
    for q, sigma, steps, width in wide:
        print(f"interval wider than the tolerance: q {q} sigma {sigma} steps {steps}: {width:.2e}")
    for q, sigma, steps, ours, theirs in heavier:
        print(f"peak memory above dp_accounting's: q {q} sigma {sigma} steps {steps}: "
              f"{ours:.0f} MiB > {theirs:.0f} MiB")
    print(f"summary: {len(ratios)} points; {sum(r <= 0.1 for r in ratios)} at or below 1/10 of "
          f"dp_accounting's time; {len(wide)} wider than the tolerance; {len(heavier)} above its "
          f"peak memory; {sum((u - p) / p > TOLERANCE for _, _, _, u, p in above)} with the upper "
          f"end above its figure by more than the tolerance")
    return 0


if __name__ == "__main__":
    sys.exit(main())
