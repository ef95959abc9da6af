#pragma once
// A formula from the deck (initial data, sources, boundary data, exact solutions,
// diffusivity), parsed once by muparser and evaluated in bulk, a grid row at a time.
// Variables: x, y, z, t; constants pi and e; muparser's functions (sin, exp, sqrt, ...).
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace adi3d::physics {

// A malformed formula: the parser's message and the position (0-based) in the text.
class FormulaError : public std::runtime_error {
 public:
  FormulaError(const std::string& message, int position)
      : std::runtime_error(message), position_(position) {}
  int position() const { return position_; }

 private:
  int position_;
};

class Formula {
 public:
  // Throws FormulaError for a malformed expression or a variable not in `allowed`.
  explicit Formula(const std::string& text,
                   const std::vector<std::string>& allowed = {"x", "y", "z", "t"});
  ~Formula();
  Formula(Formula&&) noexcept;
  Formula& operator=(Formula&&) noexcept;

  const std::string& text() const { return text_; }
  // The deck key the formula came from (source.f, ...), for messages; set by whoever
  // compiled it from a deck.
  const std::string& key() const { return key_; }
  void set_key(std::string key) { key_ = std::move(key); }
  // The same expression as C++ over doubles x, y, z, t (formula_codegen.hpp).
  const std::string& device_expression() const { return device_expression_; }
  bool uses(const std::string& variable) const;
  bool is_constant() const { return used_.empty(); }
  bool is_zero() const { return is_constant() && constant_ == 0.0; }

  double operator()(double x, double y, double z, double t) const;
  // out[i] = f(x[i], y, z, t) for i < n; safe to call from several threads at once.
  void eval_row(const double* x, int n, double y, double z, double t, double* out) const;

 private:
  struct Engine;
  Engine& engine() const;

  std::string text_;
  std::string key_;
  std::string device_expression_;
  std::vector<std::string> used_;
  double constant_ = 0;
  std::vector<std::unique_ptr<Engine>> engines_;  // one per OpenMP thread
};

}  // namespace adi3d::physics
