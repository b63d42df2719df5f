"""L2 proposals: consolidation, supersession, promotion and cleanup requests from agents."""
