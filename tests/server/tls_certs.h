// tests/server/tls_certs.h: test certificates made at run time by the
// `openssl` command (no private key is committed), for every test that
// needs TLS (the server's TLS tests, the cluster tests against a TLS etcd).
// Each construction makes a new CA; certificates live in the given dir.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "tests/server/security_fixture.h"
#include "testkit/temp_dir.h"

namespace leasehold::testing {

// A CA, a server certificate for 127.0.0.1, client certificates for alice
// (good), alice from another CA (foreign) and an expired one.
class TlsCerts {
 public:
  explicit TlsCerts(const TempDir& dir) : d_(dir.path()) {
    const std::string key = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
    run("openssl req -x509 " + key + " -keyout ca.key -out ca.crt -days 2 -subj /CN=leasehold-test-ca");
    run("openssl req -x509 " + key + " -keyout other-ca.key -out other-ca.crt -days 2 -subj /CN=other-ca");
    issue("server", "127.0.0.1", "ca", "-days 2 -extfile san.ext");
    issue("alice", "alice", "ca", "-days 2");
    issue("foreign", "alice", "other-ca", "-days 2");
    // An expired certificate: `openssl ca` takes explicit dates.
    write_text(d_ + "/ca.cnf",
               "[ca]\ndefault_ca=c\n[c]\ndatabase=" + d_ + "/index.txt\nnew_certs_dir=" + d_ +
                   "\nserial=" + d_ + "/serial\ndefault_md=sha256\npolicy=p\n[p]\ncommonName=supplied\n");
    write_text(d_ + "/index.txt", "");
    write_text(d_ + "/serial", "1000\n");
    run("openssl req " + key + " -keyout expired.key -out expired.csr -subj /CN=alice");
    run("openssl ca -batch -config ca.cnf -cert ca.crt -keyfile ca.key -in expired.csr -out expired.crt "
        "-startdate 20200101000000Z -enddate 20200102000000Z");
  }
  std::string path(const std::string& name) const { return d_ + "/" + name; }
  bool ok() const { return ok_; }
  // Issues name.crt/name.key with subject CN `cn`, signed by `ca`.
  void issue(const std::string& name, const std::string& cn, const std::string& ca, const std::string& extra) {
    write_text(d_ + "/san.ext", "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
    run("openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout " + name + ".key -out " +
        name + ".csr -subj /CN=" + cn);
    run("openssl x509 -req -in " + name + ".csr -CA " + ca + ".crt -CAkey " + ca + ".key -CAcreateserial -out " +
        name + ".crt " + extra);
  }

 private:
  void run(const std::string& command) {
    const std::string out = sh("cd " + d_ + " && " + command + " >/dev/null 2>&1 && echo done", 60);
    if (out != "done\n") {
      ok_ = false;
      ADD_FAILURE() << command << ": " << out;
    }
  }
  std::string d_;
  bool ok_ = true;
};

}  // namespace leasehold::testing
