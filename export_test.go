package floe

// OpenOn is Open with the checkpoint, the source's state included, kept on
// the given file system: tests fail its writes and syncs with
// checkpoint.FaultFS.
var OpenOn = open
