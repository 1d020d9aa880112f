// Name and path helpers for the workspace. Pure (no DOM).

// Every word of the query appears in the name, in any order, ignoring case.
export function matchName(name, query) {
  const hay = name.toLowerCase();
  return query.toLowerCase().split(/\s+/).filter(Boolean).every((w) => hay.includes(w));
}

export function joinPath(folder, name) {
  const base = folder.endsWith("/") ? folder : `${folder}/`;
  return `${base}${name.replace(/^\/+/, "")}`;
}
