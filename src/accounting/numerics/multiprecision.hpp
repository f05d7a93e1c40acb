#pragma once
// The 50-digit floating type of the RDP guard arithmetic (rdp_log_a_integer.cpp,
// rdp_log_a_fractional.cpp, rdp_events.cpp), defined once, and a start-up
// cost it would otherwise bring.
//
// Boost.Math's factorial table for a multiprecision type (101 values parsed
// from decimal strings) is built by a static initialiser in every program
// that instantiates a special function using it for that type, whether or not
// the function is ever called: 1.18 M of the 2.3 M instructions of
// `dpbudget epsilon ...` (callgrind, issue 17). The specialisation below turns
// that eager initialiser into a no-op; the table is then built on first use,
// by the function-local static in Boost's unchecked_factorial_imp, whose
// initialisation C++11 makes thread-safe. Values are unchanged: the same
// table, built later.
#include <boost/math/special_functions/factorials.hpp>
#include <boost/multiprecision/cpp_bin_float.hpp>

namespace dpb {
using mp50 = boost::multiprecision::cpp_bin_float_50;
}  // namespace dpb

namespace boost::math {
template <>
struct unchecked_factorial_initializer<dpb::mp50> {
  static void force_instantiate() {}
};
}  // namespace boost::math
