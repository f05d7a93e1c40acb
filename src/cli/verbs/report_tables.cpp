#include "cli/verbs/report_tables.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

#include "accounting/dpsgd/epsilon_series.hpp"
#include "accounting/dpsgd/run_forms.hpp"
#include "cli/input/spec_input.hpp"

namespace dpb::cli::statement {
namespace {

/// Points of the ε-versus-steps curve (log-spaced step counts from 1 to T).
constexpr int kStepCurvePoints = 16;
/// Rows of its Markdown table (a subset of the points).
constexpr int kStepTableRows = 6;

/// One event of a spec, in one line: "kind(field value, ..., inner)", the
/// fields in the kinds' order (spec_input's event_to_json), an inner event
/// nested, a list of events as their lines in brackets.
std::string event_line(const nlohmann::ordered_json& event) {
  // The first key and its value through the object's own iterator (a binding
  // to `*event.items().begin()` would outlive the proxy it refers to).
  const auto first = event.begin();
  const std::string kind = first.key();
  const auto& body = first.value();
  // Numbers as the spec holds them (the shortest text that reads back as the
  // same double): parameters are shown exactly, never rounded.
  auto value_text = [](const nlohmann::ordered_json& v) {
    return v.is_string() ? v.get<std::string>() : v.dump();
  };
  auto list_text = [&](const nlohmann::ordered_json& list) {
    std::string s;
    for (const auto& e : list) s += (s.empty() ? "" : ", ") + event_line(e);
    return "[" + s + "]";
  };
  if (body.is_array()) return kind + list_text(body);  // composed
  std::string fields;
  for (const auto& [name, v] : body.items()) {
    std::string text;
    if (v.is_object())
      text = event_line(v);
    else if (v.is_array() && !v.empty() && v.front().is_object())
      text = list_text(v);
    else if (v.is_array()) {
      for (const auto& x : v) text += (text.empty() ? "" : " ") + value_text(x);
      text = name + " [" + text + "]";
    } else {
      text = name + " " + value_text(v);
    }
    fields += (fields.empty() ? "" : ", ") + text;
  }
  return kind + "(" + fields + ")";
}

std::string relation_words(Neighbouring n) {
  switch (n) {
    case Neighbouring::add_remove:
      return "add/remove: the two datasets differ by one unit of privacy added or removed";
    case Neighbouring::replace_one:
      return "replace-one: the two datasets differ by one unit of privacy replaced by another";
    case Neighbouring::replace_special:
      return "replace-special (zero-out): one unit of privacy replaced by a null record";
  }
  return "";
}

std::string sampling_words(const DpSgdRun& run) {
  switch (run.sampling) {
    case Sampling::poisson:
      return "Poisson: each record in each step independently with probability q";
    case Sampling::without_replacement:
      return "without replacement: each step a uniformly random batch of exactly B records";
    case Sampling::shuffle:
      return "shuffle: a fresh random permutation each epoch, cut into consecutive batches";
    case Sampling::balls_in_bins:
      return "balls-in-bins: each epoch each record goes to " + std::to_string(run.participations) +
             " uniformly chosen step(s)";
  }
  return "";
}

}  // namespace

std::string unit_words(const DpSgdRun& run) {
  if (run.federated) return "one client (all of its data)";
  if (run.records_per_user == 1) return "one record";
  return "one user with " + std::to_string(run.records_per_user) + " records (user-level)";
}

report::Table parameter_table(const DpSgdRun& run, const std::string& accountants) {
  report::Table t{{"parameter", "value"}, {}, {false, false}};
  auto row = [&](std::string name, std::string value) {
    t.rows.push_back({std::move(name), std::move(value)});
  };
  row("sampling", sampling_words(run));
  row("sampling rate q", plain(run.sampling_rate));
  const bool fl = run.federated;
  if (run.dataset_size) row(fl ? "clients N" : "dataset size N", std::to_string(*run.dataset_size));
  if (run.batch_size && run.accumulation_steps > 1) {
    // The logical batch is what is sampled (docs/sampling.md#gradient-accumulation).
    row("batch size B (logical: micro-batch x accumulation steps)",
        std::to_string(*run.batch_size));
    row("micro-batch", std::to_string(*run.batch_size / run.accumulation_steps));
    row("gradient accumulation steps", std::to_string(run.accumulation_steps));
  } else if (run.batch_size) {
    row(fl ? "clients per round B" : "batch size B", std::to_string(*run.batch_size));
  }
  row("noise multiplier sigma (noise std / clipping norm)", plain(run.noise_multiplier));
  if (run.clipping_norm) {
    row("clipping norm C", plain(*run.clipping_norm));
    const bool mean = run.noise_on == NoiseOn::mean && run.batch_size;
    // The std as given, or the one σ means (noise_std_of, as the inputs echo it).
    const double std_dev = run.noise_std ? *run.noise_std : noise_std_of(run);
    row(mean ? "noise standard deviation on the mean gradient, sigma C / B"
             : "noise standard deviation sigma C",
        plain(std_dev));
  }
  row(fl ? "rounds T" : "steps T", std::to_string(run.steps));
  if (run.epochs) row("epochs", plain(*run.epochs));
  row("unit of privacy", unit_words(run));
  row("neighbouring relation", relation_words(run_relation(run)));
  row("accountants", accountants);
  return t;
}

report::Table phase_table(const Schedule& schedule) {
  report::Table t{{"phase", "sampling", "sampling rate q", "dataset size N", "batch size B",
                   "noise multiplier sigma", "steps T", "epochs"},
                  {},
                  {false, false, true, true, true, true, true, true}};
  for (std::size_t i = 0; i < schedule.phases.size(); ++i) {
    const DpSgdRun& p = schedule.phases[i];
    t.rows.push_back({schedule.names[i], sampling_words(p), plain(p.sampling_rate),
                      p.dataset_size ? std::to_string(*p.dataset_size) : "",
                      p.batch_size ? std::to_string(*p.batch_size) : "", plain(p.noise_multiplier),
                      std::to_string(p.steps), p.epochs ? plain(*p.epochs) : ""});
  }
  return t;
}

report::Table ledger_table(const DpEvent& event) {
  const auto json = event_to_json(event);
  report::Table t{{"#", "event"}, {}, {true, false}};
  // As in event_line: the first key and its value through the iterator.
  const auto first = json.begin();
  const std::string kind = first.key();
  const auto& body = first.value();
  if (kind == "composed") {
    for (std::size_t i = 0; i < body.size(); ++i)
      t.rows.push_back({std::to_string(i + 1), event_line(body[i])});
  } else {
    t.rows.push_back({"1", event_line(json)});
  }
  return t;
}

report::Figure steps_figure(const DpSgdRun& base, const AccountantChoice& choice, double delta,
                            const Answer& answer) {
  std::vector<std::int64_t> steps;
  for (int i = 0; i < kStepCurvePoints; ++i) {
    const double x =
        std::pow(static_cast<double>(base.steps), static_cast<double>(i) / (kStepCurvePoints - 1));
    const auto t = std::max<std::int64_t>(1, std::llround(x));
    if (steps.empty() || t > steps.back()) steps.push_back(t);
  }
  steps.back() = base.steps;
  report::Figure fig;
  fig.chart.title = "privacy loss against training steps";
  fig.chart.x_label = "steps";
  fig.chart.y_label = "epsilon at delta = " + plain(delta);
  fig.chart.log_x = true;
  fig.caption = "Epsilon at delta = " + plain(delta) + " after each number of steps";
  fig.fallback.header = {"steps"};
  fig.fallback.numeric = {true};
  std::vector<std::vector<std::string>> columns;
  for (const auto& name : choice.names) {
    AccountantOptions options = choice.options;
    options.neighbouring = run_neighbouring(base);
    auto event_of = [&base](std::int64_t t) {
      DpSgdRun run = base;
      run.steps = t;
      return dp_sgd_event(run);
    };
    if (make_accountant(name, options)->unsupported_reason(*event_of(steps.front()))) continue;
    report::Series s;
    std::vector<std::string> cells;
    bool approximate = false;
    for (const Guarantee& g : epsilon_series(name, options, event_of, steps, delta)) {
      s.y.push_back(g.epsilon);
      cells.push_back(up(g.epsilon));
      approximate = approximate || g.bound == BoundKind::approximate;
    }
    // The run's own length: the answer's row, as the headline and the table print it (another
    // grid could give another sound upper end).
    for (const auto& row : answer.rows)
      if (row.role == RowRole::run && row.guarantee.accountant == name &&
          row.guarantee.delta == delta) {
        s.y.back() = row.guarantee.epsilon;
        cells.back() = up(row.guarantee.epsilon);
        approximate = approximate || row.guarantee.bound == BoundKind::approximate;
      }
    for (std::int64_t t : steps) s.x.push_back(static_cast<double>(t));
    s.label = name + (approximate ? " (approximation)" : " (upper bound)");
    s.dashed = approximate;
    fig.chart.series.push_back(std::move(s));
    fig.fallback.header.push_back(name + (approximate ? " (approximate)" : ""));
    fig.fallback.numeric.push_back(true);
    columns.push_back(std::move(cells));
  }
  fig.chart.log_y = report::wants_log_y(fig.chart.series);  // as `plot` chooses
  // The Markdown table: a few of the points, always the last.
  const std::size_t n = steps.size();
  for (int r = 0; r < kStepTableRows; ++r) {
    const std::size_t i = std::min(n - 1, (n - 1) * static_cast<std::size_t>(r) /
                                              static_cast<std::size_t>(kStepTableRows - 1));
    std::vector<std::string> row{std::to_string(steps[i])};
    for (const auto& c : columns) row.push_back(c[i]);
    if (fig.fallback.rows.empty() || fig.fallback.rows.back().front() != row.front())
      fig.fallback.rows.push_back(std::move(row));
  }
  return fig;
}

}  // namespace dpb::cli::statement
