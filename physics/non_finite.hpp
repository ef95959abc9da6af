#pragma once
// A formula that gives NaN or an infinity (or, in a float run, a value beyond float's range)
// at a node where it is sampled. It is the deck's fault, not the run's: the run turns it
// into a deck error at the formula's key that names the node and the time, so that a user
// sees "source.f gives inf at x = 0.5" rather than a field of NaN.
#include <stdexcept>
#include <string>

namespace adi3d::physics {

struct NonFiniteSample {
  std::string key;  // the formula's deck key (source.f, boundary.x-, ...)
  double x = 0, y = 0, z = 0, t = 0;
  double value = 0;
};

// "gives inf at the node (x, y, z) = (0.5, 0, 0.25), t = 0.005"
std::string describe(const NonFiniteSample& s);

class NonFiniteFormula : public std::runtime_error {
 public:
  explicit NonFiniteFormula(NonFiniteSample sample)
      : std::runtime_error(sample.key + " " + describe(sample)), sample_(std::move(sample)) {}
  const NonFiniteSample& sample() const { return sample_; }

 private:
  NonFiniteSample sample_;
};

}  // namespace adi3d::physics
