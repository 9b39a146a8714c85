// cluster/cluster_member.h: one leasehold node of a replicated cluster on
// etcd (HA mode, DESIGN.md 3a, docs/cluster.md).
//
// A ClusterMember opens a Node in cluster mode over the etcd log
// (log/etcd_log.h) and drives its role:
//  - FOLLOW: a watch on the log prefix feeds every entry, in revision order,
//    to Node::follow() (standby). The primary applies its own appends and
//    stops the watch; when it steps down the watch starts again from the
//    revision after the last entry it saw or wrote (nothing is skipped:
//    any later entry of another node has a higher revision), or, if etcd
//    compacted that history, the member catches up (CATCH UP below).
//  - CAMPAIGN: a background thread holds an etcd lease (TTL = lease_ttl,
//    kept alive by etcd::LeaseKeepAlive) and campaigns with the election
//    recipe (etcd/election.h) under "<prefix>/election", value = advertise
//    (and advertise_tls: cluster/etcd_security.h encode_advertised).
//  - PROMOTE: once elected it reads the highest log index in etcd (a
//    linearizable read), waits until the node applied it, then sets the
//    log's fencing term and calls Node::promote() (timers restart with the
//    full TTL from now: the failover bound in docs/cluster.md).
//  - STEP DOWN: when the lease is lost (expired, or etcd unreachable past
//    its safe deadline) or an append fails (kConflict: deposed; kUnavailable:
//    outcome unknown), the node becomes a standby, the lease is revoked (best
//    effort; one whose revoke failed is revoked once etcd answers again, so
//    its key does not hold the election for the rest of its TTL) and the
//    member campaigns again with a new lease. While no
//    primary is known, writes get kUnavailable naming the reason (e.g.
//    "etcd unavailable: ..."); when one is, -REDIRECT <its advertise>.
//  - CATCH UP: when the log watch is cancelled (it fell behind an etcd
//    compaction) or delivers an entry after a gap, a background thread reads
//    the etcd snapshot and the entries after it at one store revision R
//    (EtcdLog::read_catch_up), starts a new watch from R + 1, and the loop
//    thread resets the node to the snapshot (Node::reset_to_snapshot) and
//    replays the entries; entries of the new watch are held until then.
//    etcd errors are retried with backoff (100 ms .. 2 s); only corruption
//    is fatal. A primary steps down before it catches up; a node elected
//    while catching up resigns. One warning line per recovery ("log catch-up
//    recovered ..."); counted in NodeStats::catch_up_recoveries. A cancelled
//    election-key watch is restarted from now.
//
// Threading: start(), take_node() and the destructor run on the loop thread.
// Background threads (campaign, catch-up, watches, keepalive) only post tasks through
// the Executor; a task that runs after the member was destroyed does nothing.
// Destroy the member BEFORE the node (it stops its threads, then revokes the
// lease so a standby takes over at once).
// Implementation: cluster_member_impl.h (threads), cluster_member.cc, cluster_campaign.cc, cluster_catch_up.cc.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "leasehold/status.h"
#include "node/clock.h"
#include "node/node.h"

namespace leasehold::cluster {

struct ClusterOptions {
  std::string etcd_endpoints;     // comma-separated URLs; empty = embedded mode
  std::string cluster_name = "leasehold";
  std::string advertise;          // host:port clients use to reach this node
  std::string advertise_tls;      // host:port of its TLS listener; "" = none
  // A secured etcd (cluster/etcd_security.h, docs/security.md): TLS for
  // https:// endpoints and an etcd user whose role may read and write prefix().
  std::string etcd_ca_file;        // PEM CAs that sign etcd's certificate ("" = system CAs)
  std::string etcd_cert_file;      // PEM client certificate (etcd --client-cert-auth)
  std::string etcd_key_file;       // its key
  std::string etcd_user;           // "" = no etcd authentication
  std::string etcd_password_file;  // the user's password (one line; not world-readable)
  std::string data_dir;           // local snapshots
  std::int64_t lease_ttl_s = 5;   // the etcd lease behind the election key
  std::chrono::milliseconds etcd_timeout{2000};    // every etcd call
  std::chrono::milliseconds append_timeout{3000};  // retries of one append
  // How long start() retries while etcd is unreachable before it fails with
  // kUnavailable; 0 = retry until etcd answers (backoff 200 ms doubling to 2 s).
  std::chrono::milliseconds startup_wait{10000};
  bool enabled() const { return !etcd_endpoints.empty(); }
  std::string prefix() const { return "/leasehold/" + cluster_name; }
};

// The campaign thread's phase (CAMPAIGN / PROMOTE / STEP DOWN above).
struct CampaignStatus {
  enum class Phase : std::uint8_t {
    kNoLease,     // granting an etcd lease (detail: the last grant's error, if any)
    kCandidate,   // own key put, waiting until every lower key is gone (detail: own key)
    kCatchingUp,  // elected, applying the log up to the highest index etcd held (detail: target, applied)
    kPrimary,     // promoted (detail: own key)
    kSteppingDown,  // lease lost or deposed (detail: why)
  };
  Phase phase = Phase::kNoLease;
  std::string detail;
  std::chrono::milliseconds in_phase{0};  // since the phase began
  // Leases of earlier campaigns whose revoke failed (etcd unreachable): the
  // campaign thread revokes them once etcd answers a grant again, so their
  // election keys stop blocking candidates behind them.
  std::size_t abandoned_leases = 0;
  std::uint64_t abandoned_leases_revoked = 0;  // since start
  // A watch on the log runs. A standby follows the log through it; a
  // primary applies its own appends and stops it until it steps down
  // (FOLLOW above).
  bool log_watch = false;
  // A watch on the election runs. A standby learns from it who leads (for
  // its redirects); a primary knows, and stops it until it steps down.
  bool leader_watch = false;
};
const char* phase_name(CampaignStatus::Phase phase);

class ClusterMember {
 public:
  // Called on the loop thread when the member cannot continue (the etcd log
  // or snapshot is corrupt: a catch-up cannot apply it); the process should
  // exit. A watch that fell behind a compaction or a log gap is NOT fatal:
  // the member catches up by itself (CATCH UP above).
  using FatalHandler = std::function<void(const Status& why)>;

  // Checks the etcd user's access to the cluster prefix (etcd::Client::
  // check_access), recovers the node from the local / etcd snapshot and the
  // etcd log, starts following and campaigning. Errors: kInvalidArgument
  // (options, unreadable TLS or password files, wrong etcd password),
  // kInternal (the etcd user may not read and write the prefix), kUnavailable
  // (etcd unreachable, or the TLS handshake failing, during recovery), the
  // node's open errors.
  static Result<std::unique_ptr<ClusterMember>> start(const ClusterOptions& options,
                                                      node::NodeOptions node_options, node::Clock& clock,
                                                      node::Executor post, FatalHandler on_fatal);
  ~ClusterMember();
  ClusterMember(const ClusterMember&) = delete;
  ClusterMember& operator=(const ClusterMember&) = delete;

  // The node (once; the caller owns it and must destroy it after the member).
  std::unique_ptr<node::Node> take_node();

  // Loop thread. The TLS address of the primary whose plain address is
  // `primary` (as in Node::primary_address()), "" when it advertises none
  // or is not the current one: a standby's -REDIRECT to a TLS client.
  std::string primary_tls_address(const std::string& primary) const;
  // Where the campaign stands (INFO "# Cluster", docs/cluster.md), so that a
  // cluster without a primary shows why. Any thread.
  CampaignStatus campaign_status() const;
  // Re-reads --etcd-password-file (SIGHUP): the next etcd authentication
  // uses it. No-op without one. Errors: read_etcd_password's; the old
  // password stays then.
  Status reload_etcd_password();

 private:
  class Impl;
  explicit ClusterMember(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace leasehold::cluster
