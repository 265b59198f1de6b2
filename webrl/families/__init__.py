"""webrl's own task families (webrl.tasks.family): the WebArena-format tasks and MiniWoB++."""
