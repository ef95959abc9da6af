#pragma once
// No silent NaN (issue 39): a formula that gives a non-finite value where the grid samples
// it is a deck error at its key (physics/non_finite.hpp), and a field that becomes
// non-finite stops the run (exit 1) before anything of it is written, naming where.
//
// What it costs: the field is checked by one norm reduction over u (a read of one array),
// which propagates NaN (solvers/nan_norms.hpp), every kFiniteCheckEvery steps, before every
// snapshot or checkpoint, and at the end; a Douglas step moves 7 arrays, so that is 1/140
// of the traffic, and a run never writes a field it has not just checked. Formulas are
// checked as they are sampled (on the GPU inside the sampling kernel), and the record of
// that is read at the same checks. Poisson iterations need no check of their own: their
// residual norms, already reduced every iteration, carry the NaN (poisson_adi.cpp).
//
// Distributed runs: each check is collective, so that every rank stops alike. The norms are
// all-reduced by the backend; where a rank finds a bad formula sample or node, the lowest
// such rank's finding goes to all.
#include "app/problem_setup.hpp"
#include "physics/grid_functions.hpp"
#include "physics/non_finite.hpp"
#include "solvers/backend.hpp"

#include <optional>
#include <stdexcept>
#include <string>

namespace adi3d::app {

// Steps between checks of a heat run's field (besides those before each output).
constexpr long kFiniteCheckEvery = 20;

// A run's field is not finite: a runtime failure, whose message names where.
class FieldNotFinite : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The lowest rank's sample where any rank has one (comm null or one rank: `local`).
std::optional<physics::NonFiniteSample> agree_on_sample(const std::optional<physics::NonFiniteSample>& local,
                                                         Communicator* comm);

// Throws NonFiniteFormula on every rank where this rank's sampling (`sample`: a
// GridFormula's first_non_finite()) or another rank's found a non-finite value.
void require_finite_sampling(const std::optional<physics::NonFiniteSample>& sample, Communicator* comm);

// The checks at a step: the forcing's samples so far (NonFiniteFormula), then u
// (FieldNotFinite, "at step 120 (t = 0.12)" when `when` says so).
template <class T>
void require_finite_run(const ProblemSetup<T>& problem, Backend<T>& backend, const T* u, const std::string& when);

}  // namespace adi3d::app
