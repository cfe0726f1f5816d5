// How the worker's agent reads a task's settings message (a qkov.v1.Training
// field; common/task_settings.h checked it first) into the options its
// trainer uses as they are: one reader per message, registered by a
// SettingsReaderRegistration in the folder of the package whose tasks read
// it (worker/tasks/text/text_settings_reader.cc, a lab's own anywhere;
// docs/adding-a-task.md). ToTrialOptions looks the reader up by the task's
// `settings`.
#ifndef QKOV_WORKER_AGENT_SETTINGS_READER_H_
#define QKOV_WORKER_AGENT_SETTINGS_READER_H_

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "qkov/v1/config.pb.h"
#include "worker/training/config.h"

namespace qkov::agent {

struct SettingsReader {
  std::string name;  // the qkov.v1.Training field, as TaskInfo::settings
  // Fills `options` from the message: TrialOptions::synthetic for the
  // synthetic message, TrialOptions::task_options for the others.
  // INVALID_ARGUMENT naming the field for a value the options cannot hold
  // (an enum value this worker does not know).
  absl::Status (*read)(const qkov::v1::Training& training,
                       training::TrialOptions* options);
};

// The reader named `name`, or nullptr.
const SettingsReader* FindSettingsReader(absl::string_view name);

// Adds `reader` to the table. Called before main() by a
// SettingsReaderRegistration; dies, naming it, on an empty or taken name, a
// null read, or when called after the first lookup.
void RegisterSettingsReader(SettingsReader reader);

class SettingsReaderRegistration {
 public:
  explicit SettingsReaderRegistration(SettingsReader reader) {
    RegisterSettingsReader(std::move(reader));
  }
};

}  // namespace qkov::agent

#endif  // QKOV_WORKER_AGENT_SETTINGS_READER_H_
