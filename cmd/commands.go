package cmd

import "github.com/spf13/cobra"

// addCommands registers every subcommand. Each lives in its own file.
func addCommands(root *cobra.Command, f *factory) {
	root.AddCommand(
		// capture & browse (capture.go, list.go, show.go, delete.go)
		newCaptureCmd(f, nil),
		newListCmd(f, nil),
		newShowCmd(f, nil),
		newDeleteCmd(f, nil),
		newPruneCmd(f, nil),
		// signatures (verify.go, sign.go, send.go, providers_list.go)
		newVerifyCmd(f, nil),
		newSignCmd(f, nil),
		newSendCmd(f, nil),
		newProvidersCmd(f, nil),
		// replay (replay.go, runs.go)
		newReplayCmd(f, nil),
		newRunsCmd(f, nil),
		// check (check.go, demo.go, export.go, import.go)
		newCheckCmd(f, nil),
		newKeycheckCmd(f, nil),
		newDemoCmd(f, nil),
		newExportCmd(f, nil),
		newImportCmd(f, nil),
		newReportCmd(f),
		// interactive (tui.go)
		newTUICmd(f, nil),
		// generated documentation (docs.go): hidden, for go generate and packaging
		newDocsCmd(),
		newManCmd(),
	)
}
