module leasehold

go 1.19

require github.com/gomodule/redigo v1.8.3

// Debian's golang-github-gomodule-redigo-dev, used in place: nothing is ever
// downloaded (GOPROXY=off). docs/go.md explains the offline build.
replace github.com/gomodule/redigo => /usr/share/gocode/src/github.com/gomodule/redigo
