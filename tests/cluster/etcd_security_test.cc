// cluster/etcd_security.h without etcd: the password file rules, the TLS
// file checks and the advertised-address encoding of the election value.
#include "cluster/etcd_security.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "testkit/temp_dir.h"

namespace leasehold::cluster {
namespace {

class EtcdSecurity : public ::testing::Test {
 protected:
  std::string file(const std::string& name, const std::string& text, mode_t mode) {
    const std::string path = dir_.file(name);
    std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
    EXPECT_EQ(::chmod(path.c_str(), mode), 0);
    return path;
  }
  testing::TempDir dir_{"etcd-security"};
};

TEST_F(EtcdSecurity, PasswordFileIsOneLineAndNotWorldReadable) {
  auto ok = read_etcd_password(file("ok.pw", "s3cret\r\n", 0600));
  ASSERT_TRUE(ok) << ok.status().to_string();
  EXPECT_EQ(*ok, "s3cret");
  EXPECT_EQ(*read_etcd_password(file("group.pw", "s3cret", 0640)), "s3cret");

  auto open = read_etcd_password(file("open.pw", "s3cret\n", 0644));
  ASSERT_FALSE(open);
  EXPECT_NE(open.status().message().find("readable by every user"), std::string::npos) << open.status().message();
  for (const std::string& bad : {std::string(""), std::string("\n"), std::string("two\nlines\n"),
                                 std::string(513, 'x')}) {
    auto r = read_etcd_password(file("bad.pw", bad, 0600));
    ASSERT_FALSE(r) << "accepted '" << bad << "'";
    EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
  }
  EXPECT_FALSE(read_etcd_password(dir_.file("missing.pw")));
}

TEST_F(EtcdSecurity, ClientOptionsCheckTheFilesAndTheirPairs) {
  ClusterOptions o;
  o.etcd_endpoints = "https://127.0.0.1:2379";
  o.etcd_ca_file = file("ca.crt", "-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n", 0644);
  auto co = etcd_client_options(o);
  ASSERT_TRUE(co) << co.status().to_string();
  EXPECT_NE(co->tls.ca_pem.find("BEGIN CERTIFICATE"), std::string::npos);

  ClusterOptions no_pem = o;
  no_pem.etcd_ca_file = file("junk.crt", "not a certificate", 0644);
  EXPECT_NE(etcd_client_options(no_pem).status().message().find("no PEM block"), std::string::npos);
  ClusterOptions missing = o;
  missing.etcd_ca_file = dir_.file("nope.crt");
  EXPECT_NE(etcd_client_options(missing).status().message().find("--etcd-ca: cannot read"), std::string::npos);
  ClusterOptions half = o;
  half.etcd_cert_file = o.etcd_ca_file;  // a certificate without its key
  EXPECT_EQ(etcd_client_options(half).status().code(), ErrorCode::kInvalidArgument);
  ClusterOptions user_only = o;
  user_only.etcd_user = "leasehold";
  EXPECT_NE(etcd_client_options(user_only).status().message().find("--etcd-password-file"), std::string::npos);
  ClusterOptions password_only = o;
  password_only.etcd_password_file = file("p.pw", "pw\n", 0600);
  EXPECT_NE(etcd_client_options(password_only).status().message().find("needs --etcd-user"), std::string::npos);
  ClusterOptions both = password_only;
  both.etcd_user = "leasehold";
  auto with_user = etcd_client_options(both);
  ASSERT_TRUE(with_user) << with_user.status().to_string();
  EXPECT_EQ(with_user->user, "leasehold");
  EXPECT_EQ(with_user->password, "pw");
}

TEST(EtcdAdvertised, PlainAndTlsAddressesRoundTrip) {
  EXPECT_EQ(encode_advertised({"10.0.0.1:7379", ""}), "10.0.0.1:7379");
  EXPECT_EQ(encode_advertised({"10.0.0.1:7379", "10.0.0.1:7380"}), "10.0.0.1:7379 tls=10.0.0.1:7380");
  const AdvertisedAddresses both = decode_advertised("10.0.0.1:7379 tls=10.0.0.1:7380");
  EXPECT_EQ(both.plain, "10.0.0.1:7379");
  EXPECT_EQ(both.tls, "10.0.0.1:7380");
  const AdvertisedAddresses plain = decode_advertised("[::1]:7379");  // an older node's value
  EXPECT_EQ(plain.plain, "[::1]:7379");
  EXPECT_EQ(plain.tls, "");
}

}  // namespace
}  // namespace leasehold::cluster
