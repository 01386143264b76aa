"""The matrices' loaders and pure derivations from them: layouts, topologies, the plan, handles."""
