// `qkov report [--sweep CLAIM=SWEEP]... [--out DIR]` (docs/report.md): the
// reproduction report (common/report/report.h) of the server's sweeps, over
// gRPC; writes DIR/report.md, report.html and report.json and prints one
// line per claim.
#ifndef QKOV_CLIENT_REPORT_COMMAND_H_
#define QKOV_CLIENT_REPORT_COMMAND_H_

#include <string>
#include <vector>

#include "client/connection.h"

namespace qkov::client {

// The CLI's exit code.
int Report(Connection& conn, const std::vector<std::string>& sweep_flags,
           const std::string& out_dir);

}  // namespace qkov::client

#endif  // QKOV_CLIENT_REPORT_COMMAND_H_
