// qkov-worker's manual page (qkov-worker --man_page; common/man_page.h).
#ifndef QKOV_WORKER_AGENT_WORKER_MANUAL_H_
#define QKOV_WORKER_AGENT_WORKER_MANUAL_H_

#include "common/man_page.h"

namespace qkov::agent {

ManPage WorkerManPage();

}  // namespace qkov::agent

#endif  // QKOV_WORKER_AGENT_WORKER_MANUAL_H_
