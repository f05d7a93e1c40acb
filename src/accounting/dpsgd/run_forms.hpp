#pragma once
// A run's parameters given in other forms than (q, σ, T) or (N, B, epochs):
// the noise as a standard deviation with the clipping norm
// (docs/sampling.md#noise-as-a-standard-deviation), and a federated run of
// clients, clients per round and rounds (docs/sampling.md#federated-learning).
// derive_run() reads them through these; no I/O.
#include <cstdint>
#include <optional>

#include "accounting/dpsgd/dp_sgd_run.hpp"

namespace dpb {

/// σ of noise given as a standard deviation s with the clipping norm C: s/C on
/// the sum, s·B/C on the mean of the expected batch B (`batch`), rounded down;
/// nullopt when no std is given. Sets `run`'s noise_std, clipping_norm and
/// noise_on, and refuses (RunParameterError) a noise_on without a clipping
/// norm, a std beside σ or when σ is solved for, and a mean without B.
std::optional<double> multiplier_of_std(const RunValues& v, RunUnknown unknown,
                                        std::optional<std::int64_t> batch, DpSgdRun& run);

/// The noise std a run's σ means with its clipping norm C (set): σ·C on the
/// sum, σ·C/B on the mean; rounded up (the std that meets σ); the
/// gradient's σ under adaptive clipping.
double noise_std_of(const DpSgdRun& run);

/// Whether the values describe a federated run (clients, clients per round or rounds given).
bool is_federated(const RunValues& v);

/// A federated run's values as a DP-SGD run's: N = clients, B = clients per
/// round, T = rounds. Refuses the DP-SGD parameters beside them (they would
/// count the same thing twice, or something a round is not). Other values are
/// returned as they are.
RunValues as_dp_sgd(const RunValues& v);

/// `e` with dataset_size, batch_size and steps named as a federated run's
/// clients, clients_per_round and rounds.
RunParameterError federated_error(const RunParameterError& e);

}  // namespace dpb
