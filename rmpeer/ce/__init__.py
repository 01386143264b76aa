"""A session's copy engine, driven through RM alone."""
