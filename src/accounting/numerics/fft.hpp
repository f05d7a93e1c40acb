#pragma once
// Real-input discrete Fourier transforms for the PLD accountant, behind one
// small interface so the library (FFTW 3, double precision) can be swapped.
#include <complex>
#include <cstddef>
#include <span>
#include <vector>

namespace dpb::fft {

/// Smallest m ≥ n whose only prime factors are 2, 3, 5 and 7 (fast FFT sizes).
std::size_t good_size(std::size_t n);

/// Forward transform of the real sequence x (zero-padded or folded modulo n to
/// length n): X_k = Σ_j x_j e^{−2πi jk/n}, k = 0 … n/2 (the other half is the
/// conjugate mirror).
std::vector<std::complex<double>> forward(std::span<const double> x, std::size_t n);

/// |X_k| of forward(x, n), k = 0 … n/2, without holding the complex spectrum.
std::vector<double> forward_modulus(std::span<const double> x, std::size_t n);

/// Inverse of forward(): y_j = (1/n) Σ_k X_k e^{2πi jk/n} for a Hermitian
/// spectrum given by its n/2 + 1 first coefficients.
std::vector<double> inverse(std::vector<std::complex<double>> spectrum, std::size_t n);

/// "FFTW 3.x" — for reports.
const char* library_name();

}  // namespace dpb::fft
