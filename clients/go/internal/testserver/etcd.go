package testserver

import (
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// StartEtcd runs a one-member etcd (Debian's etcd-server) on free
// 127.0.0.1 ports with its data in the test's temporary directory, killed
// when the test ends, and returns its client URL. The test is skipped when
// etcd is not installed.
func StartEtcd(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("etcd")
	if err != nil {
		t.Skip("etcd not installed (scripts/install-deps.sh installs etcd-server)")
	}
	clientPort, peerPort := FreePort(t), FreePort(t)
	clientURL := "http://127.0.0.1:" + strconv.Itoa(clientPort)
	peerURL := "http://127.0.0.1:" + strconv.Itoa(peerPort)
	dir := t.TempDir()
	cmd := exec.Command(bin, "--name", "e0", "--data-dir", filepath.Join(dir, "etcd"),
		"--listen-client-urls", clientURL, "--advertise-client-urls", clientURL,
		"--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL,
		"--initial-cluster", "e0="+peerURL, "--initial-cluster-state", "new",
		"--listen-metrics-urls", "http://127.0.0.1:"+strconv.Itoa(FreePort(t)))
	if err := cmd.Start(); err != nil {
		t.Fatalf("cannot run etcd: %v", err)
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	Require(t, 20*time.Second, "etcd listens", func() bool {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(clientPort), 200*time.Millisecond)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	return clientURL
}
