# (empty for now)
bench:
	@echo "no benchmarks yet"
