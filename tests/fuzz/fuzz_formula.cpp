// libFuzzer target: a formula as a deck gives it (initial.u, source.f, boundary data).
// It is parsed (muparser) and translated for the GPU (formula_codegen), or refused with a
// FormulaError; an accepted formula evaluates, and its translation is C++ that compiles:
// checked token by token here (balanced parentheses, known functions and variables,
// complete number literals, C++ operators), since no compiler runs in the fuzzing loop.
#include "physics/formula.hpp"

#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>

namespace {

[[noreturn]] void finding(const std::string& formula, const std::string& code, const std::string& why) {
  std::fprintf(stderr, "fuzz_formula: '%s' translated to '%s': %s\n", formula.c_str(), code.c_str(), why.c_str());
  std::abort();
}

// Whether `code` is an expression a C++ compiler takes, as far as its tokens tell.
void check_device_code(const std::string& formula, const std::string& code) {
  static const std::set<std::string> names = {
      "x", "y", "z", "t", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh",
      "acosh", "atanh", "exp", "sqrt", "log", "log2", "log10", "fabs", "atan2", "floor", "fmin", "fmax", "pow"};
  static const std::set<std::string> operators = {"+", "-", "*", "/", "<", ">", "<=", ">=", "==", "!=",
                                                  "&&", "||", "?", ":", "(", ")", ",", "!"};
  int depth = 0;
  for (std::size_t i = 0; i < code.size();) {
    const char c = code[i];
    if (c == ' ') {
      ++i;
    } else if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
      char* end = nullptr;
      std::strtod(code.c_str() + i, &end);
      const std::size_t n = static_cast<std::size_t>(end - (code.c_str() + i));
      if (n == 0) finding(formula, code, "a number literal that does not parse at " + std::to_string(i));
      const std::string literal = code.substr(i, n);
      if (literal.find_first_of(".eE") == std::string::npos)
        finding(formula, code, "an integer literal '" + literal + "' (integer arithmetic in C++)");
      if (literal.find_first_of("xXpPnN") != std::string::npos)
        finding(formula, code, "a literal '" + literal + "' C++ reads otherwise");
      i += n;
      if (i < code.size() && (std::isalnum(static_cast<unsigned char>(code[i])) || code[i] == '_'))
        finding(formula, code, "a literal runs into a name at " + std::to_string(i));
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      std::size_t j = i;
      while (j < code.size() && (std::isalnum(static_cast<unsigned char>(code[j])) || code[j] == '_')) ++j;
      const std::string name = code.substr(i, j - i);
      if (!names.count(name)) finding(formula, code, "an unknown name '" + name + "'");
      i = j;
    } else {
      const std::string two = code.substr(i, 2);
      const std::string op = operators.count(two) ? two : std::string(1, c);
      if (!operators.count(op)) finding(formula, code, "an unexpected character '" + op + "'");
      if (op == "(") ++depth;
      if (op == ")" && --depth < 0) finding(formula, code, "an unmatched ')'");
      i += op.size();
    }
  }
  if (depth != 0) finding(formula, code, "unbalanced parentheses");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const adi3d::physics::Formula f(text);
    static_cast<void>(f(0.25, 0.5, 0.75, 0.125));
    check_device_code(text, f.device_expression());
  } catch (const adi3d::physics::FormulaError&) {
  }
  return 0;
}
