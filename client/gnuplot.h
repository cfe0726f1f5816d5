// Gnuplot for qkov plot (client/plot.h): a script run with an argument
// vector (no shell) into PNG and SVG, and the quoting every string from a
// path or from the server goes through on its way into a script.
#ifndef QKOV_CLIENT_GNUPLOT_H_
#define QKOV_CLIENT_GNUPLOT_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace qkov::client {

// `s` as a gnuplot single-quoted string: a quote is doubled (gnuplot's only
// escape there) and control characters, which would end the command, become
// '?'.
std::string GnuplotQuoted(absl::string_view s);

// Writes OUT.gp and runs it into OUT.png and OUT.svg; `body` reads its data
// as `datafile` (set to OUT.dat). Gnuplot's standard error goes to
// OUT.gnuplot.log, removed when empty. FAILED_PRECONDITION when gnuplot
// cannot run, INTERNAL when it fails.
absl::Status RunGnuplot(const std::string& out_base, const std::string& body,
                        int width = 1000, int height = 650);

// A metric's axis label ("distinct-token attention" for distinct_attention).
std::string MetricLabel(const std::string& metric);

}  // namespace qkov::client

#endif  // QKOV_CLIENT_GNUPLOT_H_
