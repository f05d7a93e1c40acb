#pragma once
// Which conversion turns a Rényi-DP curve into (ε, δ): the one choice the
// RDP maths takes from the accountant's options.

namespace dpb {

/// Conversion from Rényi DP to (ε, δ), docs/rdp.md#conversion.
enum class RdpConversion { improved, classic };

}  // namespace dpb
