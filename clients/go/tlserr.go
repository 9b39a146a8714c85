package leasehold

import (
	"crypto/x509"
	"errors"
)

// isCertificateError reports whether a TLS handshake failed because the
// server's certificate was not trusted (as opposed to a network failure).
func isCertificateError(err error) bool {
	var unknown x509.UnknownAuthorityError
	var invalid x509.CertificateInvalidError
	var host x509.HostnameError
	return errors.As(err, &unknown) || errors.As(err, &invalid) || errors.As(err, &host)
}
