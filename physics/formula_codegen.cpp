#include "physics/formula_codegen.hpp"

#include "physics/formula.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <vector>

namespace adi3d::physics {
namespace {

class Translator {
 public:
  explicit Translator(const std::string& text) : s_(text) {}

  std::string run() {
    std::string out = ternary();
    skip();
    if (pos_ < s_.size()) {
      if (s_[pos_] == ',') fail("several comma-separated results are not supported");
      if (s_[pos_] == '=') fail("assignment is not supported in a formula");
      fail("unexpected '" + std::string(1, s_[pos_]) + "'");
    }
    return out;
  }

 private:
  [[noreturn]] void fail(const std::string& message) const { throw FormulaError(message, static_cast<int>(pos_)); }

  void skip() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool accept(const char* token) {
    skip();
    const std::size_t len = std::char_traits<char>::length(token);
    if (s_.compare(pos_, len, token) != 0) return false;
    // '<' must not swallow the first half of '<='; '=' alone is assignment.
    if ((len == 1 && (token[0] == '<' || token[0] == '>' || token[0] == '!')) && pos_ + 1 < s_.size() &&
        s_[pos_ + 1] == '=')
      return false;
    pos_ += len;
    return true;
  }
  void expect(const char* token) {
    if (!accept(token)) fail(std::string("expected '") + token + "'");
  }

  static std::string truth(const std::string& condition) { return "((" + condition + ") ? 1.0 : 0.0)"; }
  static std::string nonzero(const std::string& a) { return "((" + a + ") != 0.0)"; }

  std::string ternary() {
    std::string c = logical_or();
    if (!accept("?")) return c;
    std::string a = ternary();
    expect(":");
    std::string b = ternary();
    return "(" + nonzero(c) + " ? (" + a + ") : (" + b + "))";
  }
  std::string logical_or() {
    std::string a = logical_and();
    while (accept("||")) a = truth(nonzero(a) + " || " + nonzero(logical_and()));
    return a;
  }
  std::string logical_and() {
    std::string a = comparison();
    while (accept("&&")) a = truth(nonzero(a) + " && " + nonzero(comparison()));
    return a;
  }
  std::string comparison() {
    std::string a = additive();
    for (;;) {
      const char* ops[] = {"<=", ">=", "==", "!=", "<", ">"};
      const char* found = nullptr;
      for (const char* op : ops)
        if (accept(op)) {
          found = op;
          break;
        }
      if (!found) return a;
      a = truth("(" + a + ") " + found + " (" + additive() + ")");
    }
  }
  std::string additive() {
    std::string a = multiplicative();
    for (;;) {
      if (accept("+"))
        a = "(" + a + " + " + multiplicative() + ")";
      else if (accept("-"))
        a = "(" + a + " - " + multiplicative() + ")";
      else
        return a;
    }
  }
  std::string multiplicative() {
    std::string a = unary();
    for (;;) {
      if (accept("*"))
        a = "(" + a + " * " + unary() + ")";
      else if (accept("/"))
        a = "(" + a + " / " + unary() + ")";
      else
        return a;
    }
  }
  // Unary signs bind looser than ^ (muparser: -2^2 = -4).
  std::string unary() {
    if (accept("-")) return "(-" + unary() + ")";
    if (accept("+")) return unary();
    return power();
  }
  std::string power() {
    std::string base = primary();
    if (!accept("^")) return base;
    return "pow(" + base + ", " + exponent() + ")";
  }
  std::string exponent() {  // right associative, may carry its own sign: 2^-1, 2^3^2
    if (accept("-")) return "(-" + exponent() + ")";
    if (accept("+")) return exponent();
    return power();
  }

  std::string number() {
    const char* start = s_.c_str() + pos_;
    char* end = nullptr;
    const double v = std::strtod(start, &end);
    pos_ += static_cast<std::size_t>(end - start);
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    std::string out = buf;
    if (out.find_first_of(".eEn") == std::string::npos) out += ".0";
    return out;
  }

  std::vector<std::string> arguments() {
    std::vector<std::string> args;
    expect("(");
    if (accept(")")) return args;
    do args.push_back(ternary());
    while (accept(","));
    expect(")");
    return args;
  }

  std::string call(const std::string& name, std::size_t at) {
    const std::vector<std::string> args = arguments();
    auto need = [&](std::size_t count) {
      if (args.size() != count) {
        pos_ = at;
        fail("'" + name + "' takes " + std::to_string(count) + " argument(s)");
      }
    };
    static const std::map<std::string, std::string> same = {
        {"sin", "sin"},   {"cos", "cos"},     {"tan", "tan"},     {"asin", "asin"},   {"acos", "acos"},
        {"atan", "atan"}, {"sinh", "sinh"},   {"cosh", "cosh"},   {"tanh", "tanh"},   {"asinh", "asinh"},
        {"acosh", "acosh"}, {"atanh", "atanh"}, {"exp", "exp"},   {"sqrt", "sqrt"},   {"log", "log"},
        {"ln", "log"},    {"log2", "log2"},   {"log10", "log10"}, {"abs", "fabs"}};
    if (const auto it = same.find(name); it != same.end()) {
      need(1);
      return it->second + "(" + args[0] + ")";
    }
    if (name == "atan2") {
      need(2);
      return "atan2(" + args[0] + ", " + args[1] + ")";
    }
    if (name == "sign") {
      need(1);
      return "(((" + args[0] + ") > 0.0) ? 1.0 : (((" + args[0] + ") < 0.0) ? -1.0 : 0.0))";
    }
    if (name == "rint") {  // muparser rounds halves up: floor(x + 0.5)
      need(1);
      return "floor((" + args[0] + ") + 0.5)";
    }
    if (name == "min" || name == "max" || name == "sum" || name == "avg") {
      if (args.empty()) {
        pos_ = at;
        fail("'" + name + "' needs at least one argument");
      }
      std::string acc = args[0];
      for (std::size_t i = 1; i < args.size(); ++i)
        acc = name == "min" ? "fmin(" + acc + ", " + args[i] + ")"
              : name == "max" ? "fmax(" + acc + ", " + args[i] + ")"
                              : "(" + acc + " + " + args[i] + ")";
      if (name == "avg") acc = "(" + acc + " / " + std::to_string(args.size()) + ".0)";
      return acc;
    }
    pos_ = at;
    fail("function '" + name + "' has no device version");
  }

  std::string primary() {
    skip();
    if (pos_ >= s_.size()) fail("unexpected end of formula");
    const char ch = s_[pos_];
    if (ch == '(') {
      ++pos_;
      std::string inner = ternary();
      expect(")");
      return "(" + inner + ")";
    }
    if (std::isdigit(static_cast<unsigned char>(ch)) || ch == '.') return number();
    if (std::isalpha(static_cast<unsigned char>(ch)) || ch == '_') {
      const std::size_t at = pos_;
      while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) ++pos_;
      const std::string name = s_.substr(at, pos_ - at);
      skip();
      if (pos_ < s_.size() && s_[pos_] == '(') return call(name, at);
      if (name == "x" || name == "y" || name == "z" || name == "t") return name;
      if (name == "pi" || name == "_pi") return "3.141592653589793238";
      if (name == "e" || name == "_e") return "2.718281828459045235";
      pos_ = at;
      fail("unknown name '" + name + "'");
    }
    fail("unexpected '" + std::string(1, ch) + "'");
  }

  const std::string& s_;
  std::size_t pos_ = 0;
};

}  // namespace

std::string to_device_expression(const std::string& formula) { return Translator(formula).run(); }

}  // namespace adi3d::physics
