// qkov-server's manual page (qkov-server --man_page; common/man_page.h).
#ifndef QKOV_SERVER_SERVICE_SERVER_MANUAL_H_
#define QKOV_SERVER_SERVICE_SERVER_MANUAL_H_

#include "common/man_page.h"

namespace qkov::service {

ManPage ServerManPage();

}  // namespace qkov::service

#endif  // QKOV_SERVER_SERVICE_SERVER_MANUAL_H_
