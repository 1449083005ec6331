"""Reading notes safely, resolving links and `![[embeds]]` the way Obsidian does."""
