// Package redact owns what hookreplay hides: credentials in exported
// deliveries (Delivery) and the secrets a user gives on the command line
// wherever text is stored or printed (Secrets). Everything replaced reads
// Marker.
package redact

// Marker replaces every redacted value.
const Marker = "[REDACTED]"
