#pragma once
// Translates a deck formula (muparser syntax) into an equivalent C++/CUDA expression in
// double precision, so that the GPU can evaluate sources and boundary data in a kernel
// compiled at run time (NVRTC) instead of the host evaluating every node every step.
// Precedence follows muparser 2.3: ?: < || < && < comparisons < + - < * / and unary
// minus < ^ (right associative), so -2^2 = -4 and 2^3^2 = 512.
#include <string>

namespace adi3d::physics {

// The C++ text of the expression over double variables x, y, z, t. Throws FormulaError
// (with the position) for constructs that have no device equivalent (assignment, several
// comma-separated results).
std::string to_device_expression(const std::string& formula);

}  // namespace adi3d::physics
