// msgpackr loads this in a try/catch and falls back to its pure-JS decoder when it throws.
throw new Error('msgpackr-extract is not installed: msgpackr uses its pure-JS path')
