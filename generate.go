package main

// docs/reference is generated from the command tree; TestReferenceDocsUpToDate
// (cmd/docs_test.go) fails when it is stale.
//go:generate go run . docs docs/reference
