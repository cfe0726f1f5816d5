// The dashboard's server-sent events (HttpService,
// server/service/http_service.h): a follower per stream, and the loop that
// writes each follower the sweeps list and its sweep's progress when they
// change.
#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/text.h"
#include "server/service/http_json.h"
#include "server/service/http_service.h"

namespace qkov::service {

namespace v1 = ::qkov::v1;

http::HttpReply HttpService::Events(const http::HttpRequest& req) {
  absl::StatusOr<std::string> key = Authorize(req);
  if (!key.ok()) return http::ErrorReply(key.status());
  auto follower = std::make_shared<Follower>();
  Follower& f = *follower;
  f.sweep = req.Param("sweep");
  f.since = absl::Now();
  if (!f.sweep.empty()) {
    if (absl::Status s = core_->sweeps().GetSweep(f.sweep).status(); !s.ok())
      return http::ErrorReply(s);
  }
  {
    absl::MutexLock lock(&streams_mu_);
    if (open_streams_ >= config_.max_event_streams) {
      return http::ErrorReply(absl::ResourceExhaustedError(
          absl::StrCat("events: ", config_.max_event_streams,
                       " streams are open; close a dashboard tab")));
    }
    int& mine = streams_by_key_[*key];
    if (mine >= config_.event_streams_per_token) {
      return http::ErrorReply(absl::ResourceExhaustedError(
          absl::StrCat("events: ", mine,
                       " streams are open with this token; close a "
                       "dashboard tab")));
    }
    ++mine;
    ++open_streams_;
  }
  f.stream = std::make_shared<http::ReplyStream>([this, k = *key] {
    absl::MutexLock lock(&streams_mu_);
    --open_streams_;
    auto it = streams_by_key_.find(k);
    if (it != streams_by_key_.end() && --it->second <= 0)
      streams_by_key_.erase(it);
  });
  const uint64_t read_at = core_->changes().ChangeCount();
  std::string first = Event(f, nullptr);
  if (first.empty()) {
    return http::ErrorReply(
        absl::UnavailableError("events: the sweep cannot be read now; retry"));
  }
  f.stream->Write(first);
  http::HttpReply reply;
  reply.content_type = "text/event-stream";
  reply.headers.emplace_back("Cache-Control", "no-store");
  reply.stream = f.stream;
  {
    absl::MutexLock lock(&streams_mu_);
    followers_.push_back(std::move(follower));
  }
  // A change between the first read and the registration may have had its
  // round of events without this stream: one more round.
  if (core_->changes().ChangeCount() != read_at)
    core_->changes().NotifyChange();
  return reply;
}

// `event: sweeps` carries the sweep list; with ?sweep=NAME, `event:
// progress` carries that sweep and the trials that changed since the last
// event (id, state, last step; the SweepControl::kBriefProgressTrials most
// recently changed, newest first). "" when it cannot be read.
std::string HttpService::Event(Follower& f, const std::string* sweeps_json) {
  if (f.sweep.empty()) {
    std::string json;
    if (sweeps_json != nullptr) {
      json = *sweeps_json;
    } else {
      absl::StatusOr<std::string> list = JsonOf(core_->sweeps().ListSweeps());
      if (!list.ok()) return "";
      json = *std::move(list);
    }
    return absl::StrCat("event: sweeps\ndata: ", json, "\n\n");
  }
  absl::Time since = f.since;
  absl::StatusOr<v1::SweepProgress> p =
      core_->sweeps().Progress(f.sweep, &since, /*brief=*/true);
  if (!p.ok()) return "";
  absl::StatusOr<std::string> json = ToJson(*p);
  if (!json.ok()) return "";
  f.since = since;
  return absl::StrCat("event: progress\ndata: ", *json, "\n\n");
}

// One event per change to every stream, coalesced over 200 ms, or over 200
// times the CPU the last round of events took when that is longer (so all
// streams together cost at most what a shared view does, ReplyCache); a
// comment on a stream quiet for 15 s keeps proxies from closing it. Waits in
// slices of at most 1 s, so Stop() is never held up. The change count is
// taken before a round reads: a change made during the round brings
// another.
void HttpService::EventsLoop() {
  absl::Duration cost;
  uint64_t seen = core_->changes().ChangeCount();
  while (!stopping_) {
    const bool changed = core_->changes().WaitForChange(
                             seen, absl::Now() + absl::Seconds(1)) != seen;
    if (stopping_) return;
    {
      absl::MutexLock lock(&streams_mu_);
      followers_.erase(std::remove_if(followers_.begin(), followers_.end(),
                                      [](const std::shared_ptr<Follower>& f) {
                                        return f->stream->ended();
                                      }),
                       followers_.end());
    }
    if (!changed) {
      absl::MutexLock lock(&streams_mu_);
      const absl::Time quiet = absl::Now() - absl::Seconds(15);
      for (const auto& f : followers_)
        if (f->stream->last_write() < quiet) f->stream->Write(": ping\n\n");
      continue;
    }
    const absl::Time next = absl::Now() + std::max(absl::Milliseconds(200),
                                                   ReplyCache::ReuseFor(cost));
    while (!stopping_ && absl::Now() < next)
      absl::SleepFor(std::min(absl::Milliseconds(200), next - absl::Now()));
    if (stopping_) return;
    seen = core_->changes().ChangeCount();
    const absl::Duration cpu0 = ThreadCpuTime();
    // A follower's `since` is this thread's alone once it is registered, so
    // the round needs the lock only to list them.
    std::vector<std::shared_ptr<Follower>> round;
    {
      absl::MutexLock lock(&streams_mu_);
      round = followers_;
    }
    std::optional<std::string> sweeps;
    for (const auto& follower : round) {
      Follower& f = *follower;
      if (f.sweep.empty() && !sweeps.has_value()) {
        absl::StatusOr<std::string> json = JsonOf(core_->sweeps().ListSweeps());
        sweeps = json.ok() ? *std::move(json) : "";
      }
      if (f.sweep.empty() && sweeps->empty()) continue;
      const std::string event = Event(f, f.sweep.empty() ? &*sweeps : nullptr);
      if (event.empty())
        f.stream->End();
      else
        f.stream->Write(event);
    }
    cost = ThreadCpuTime() - cpu0;
  }
}

}  // namespace qkov::service
