"""Privacy attacks: singling out, attribute inference, distinguishing."""
