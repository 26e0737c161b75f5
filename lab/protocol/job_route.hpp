#pragma once
// Host side of a job list (a shared boot): which job each record of one VM's stream belongs to.
// The agent runs the jobs in list order and stamps every record of job i with "cell" (and
// "job": i); what the guest sends is untrusted, so a record that names a cell outside the list,
// an index that disagrees with its cell, or an earlier job than one already seen is not routed.
#include <string>
#include <vector>

#include "protocol/record_stream.hpp"

namespace smtlab::protocol {

class JobRouter {
 public:
  explicit JobRouter(std::vector<std::string> cells);
  // The index of the record's job in the list. A record without "cell" (hello, or one written
  // before the first job started) belongs to the current job: the last one a record named, job 0
  // at first. -1: the record cannot be routed; `why` (when given) says why.
  int route(const Record& record, std::string* why = nullptr);
  int current() const { return current_; }
  size_t size() const { return cells_.size(); }

 private:
  std::vector<std::string> cells_;
  int current_ = 0;
};

}  // namespace smtlab::protocol
