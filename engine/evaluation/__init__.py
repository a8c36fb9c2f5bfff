"""Program effectiveness: what a privatized dataset costs the program that uses it."""
