// qkov-data's manual page (qkov-data --man_page; common/man_page.h).
#ifndef QKOV_WORKER_DATA_DATA_MANUAL_H_
#define QKOV_WORKER_DATA_DATA_MANUAL_H_

#include "common/man_page.h"

namespace qkov::data {

ManPage DataManPage();

}  // namespace qkov::data

#endif  // QKOV_WORKER_DATA_DATA_MANUAL_H_
