// Package c2sptest holds the test of an independent C2SP client against
// the log's published checkpoints, tiles and entry bundles: the client is
// written from the specifications (tlog-checkpoint, signed-note,
// tlog-tiles) with golang.org/x/mod/sumdb/note and sumdb/tlog alone, and
// uses this repository's packages only to run the server it checks. A
// second test reads the same endpoints with filippo.io/torchwood's client.
package c2sptest
