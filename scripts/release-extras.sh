#!/bin/sh
# GoReleaser's before-hook: the files the archives ship beside the binary,
# generated from the command tree so they never drift from it:
#   completions/hookreplay.{bash,zsh,fish}   `hookreplay completion SHELL`
#   manpages/*.1                             `hookreplay man DIR`, once the
#                                            binary has that command
set -eu
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/hookreplay" .
rm -rf completions manpages
mkdir -p completions manpages
for sh in bash zsh fish; do
	"$tmp/hookreplay" completion "$sh" >"completions/hookreplay.$sh"
done
if "$tmp/hookreplay" man --help >/dev/null 2>&1; then
	"$tmp/hookreplay" man manpages
else
	echo "release-extras: this hookreplay has no 'man' command yet: archives ship without man pages" >&2
fi
