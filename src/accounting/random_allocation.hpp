#pragma once
// PLACEHOLDER until the random-allocation PLD lands (branch `ra`): every call
// refuses, so balls-in-bins is refused by the pld accountant, never guessed.
#include <cstdint>

#include "accounting/errors.hpp"
#include "accounting/pld.hpp"

namespace dpb {

struct RandomAllocationPlds {
  pld::Mechanism upper;
  pld::Mechanism lower;
};

inline RandomAllocationPlds random_allocation_plds(std::int64_t, double, double) {
  throw UnsupportedEvent("pld: random_allocation is not implemented yet");
}

}  // namespace dpb
