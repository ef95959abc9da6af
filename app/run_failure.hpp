#pragma once
// A failure in the middle of a run (a CUDA error, a lost device, memory that ran out, an
// output that could not be written) as one line that says where the run was and on what,
// ahead of the cause: "in step 7 of 20 (from t = 0.06) on cuda device 0 (...): ...".
// Failures that already say where they are pass unchanged: a field that stopped being
// finite, a formula that gave a non-finite value (a deck error at its line), a deck error,
// Poisson data that do not balance.
#include "app/finite_check.hpp"
#include "io/deck.hpp"
#include "physics/non_finite.hpp"
#include "solvers/poisson_adi.hpp"

#include <stdexcept>
#include <string>

namespace adi3d::app {

class RunFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Called in a catch (...) block: rethrows the exception in flight, as a RunFailure that
// starts with `where` unless it is one of those that already say where.
[[noreturn]] inline void rethrow_placed(const std::string& where) {
  try {
    throw;
  } catch (const FieldNotFinite&) {
    throw;
  } catch (const physics::NonFiniteFormula&) {
    throw;
  } catch (const io::DeckError&) {
    throw;
  } catch (const IncompatibleData&) {
    throw;
  } catch (const RunFailure&) {
    throw;
  } catch (const std::exception& e) {
    throw RunFailure(where + ": " + e.what());
  }
}

}  // namespace adi3d::app
