"""webrl's own task families (webrl.tasks.family): the WebArena-format tasks, WebArena-Verified and MiniWoB++."""
