//! The retrieval pipeline on a real engine with a real code graph: the graph path finds
//! memories by the symbols and files a query names and by the neighbours of recently
//! touched files,
//! the boost lifts neighbours of the top results, filters hold on every path, and the same
//! data gives the same ranking on every engine.

use engram::{Database, Engram, IndexOptions, MemoryType, NewMemory, SearchQuery};

use crate::code_graph::{repo, USERS};

/// What [`retrieval_suite`] observed, for comparing engines: per query, the result contents
/// with whether the graph path found each. Sorted by content, because memories with equal
/// scores are ordered by id, and ids are random per run.
#[derive(Debug, Clone, PartialEq)]
pub struct RetrievalOutcome {
    /// Per query, (content, found by the graph path), sorted.
    pub rankings: Vec<Vec<(String, bool)>>,
}

/// The hit of `response` whose memory holds `content`.
fn hit_with<'a>(
    response: &'a engram::SearchResponse,
    content: &str,
) -> Option<&'a engram::SearchHit> {
    response.hits.iter().find(|h| h.memory.content == content)
}

/// The graph path's metric for each memory of `contents` on `text` (0 when not a graph
/// hit).
async fn graph_metrics<D: Database, const N: usize>(
    engram: &Engram<D>,
    text: &str,
    contents: [&str; N],
) -> [f64; N] {
    let response = engram
        .search(&SearchQuery::new(text))
        .await
        .expect("search");
    contents.map(|content| {
        hit_with(&response, content)
            .and_then(|h| h.breakdown.graph.map(|g| g.metric))
            .unwrap_or(0.0)
    })
}

fn memory(content: &str, files: &[&str], node: Option<&str>) -> NewMemory {
    let mut m = NewMemory::new(MemoryType::Gotcha, content);
    m.related_files = files.iter().map(|f| f.to_string()).collect();
    m.target_node_id = node.map(str::to_owned);
    m
}

/// Runs the scenario on `engram` (an empty project) and returns the rankings it saw.
pub async fn retrieval_suite<D: Database>(engram: &Engram<D>) -> RetrievalOutcome {
    engram
        .index_files(&repo(USERS), &IndexOptions::default())
        .await
        .expect("index");
    let on_get_user = memory(
        "Cache lookups before hitting the store; the first call is slow",
        &["src/users.ts"],
        Some("src/users.ts#function:getUser"),
    );
    let on_db = memory("Close the pool in tests", &["src/db.ts"], None);
    let on_routes = memory("Handlers must not block", &["src/routes.ts"], None);
    let unrelated = memory("Release notes are written by hand", &["CHANGELOG.md"], None);
    for m in [&on_get_user, &on_db, &on_routes, &unrelated] {
        engram.remember(m.clone()).await.expect("remember");
    }
    let mut rankings = Vec::new();
    let mut run = |response: &engram::SearchResponse| {
        let mut seen: Vec<(String, bool)> = response
            .hits
            .iter()
            .map(|h| (h.memory.content.clone(), h.breakdown.graph.is_some()))
            .collect();
        seen.sort();
        rankings.push(seen);
    };

    // A query naming `getUser` finds the memory on that node through the graph path only
    // and by its file name, ranked first.
    let named = engram
        .search(&SearchQuery::new("why is getUser slow"))
        .await
        .expect("search");
    run(&named);
    assert_eq!(
        named.hits[0].memory.content, on_get_user.content,
        "{named:#?}"
    );
    let first = &named.hits[0].breakdown;
    assert_eq!(first.graph.map(|g| g.rank), Some(1));
    assert_eq!(named.identifiers, ["getUser"]);

    // Recently touched files: their 1-hop neighbours (users.ts imports db.ts, routes.ts
    // imports users.ts) are graph candidates; the unrelated memory is not.
    let mut near = SearchQuery::new("what should I know");
    near.context.recent_files = vec!["src/users.ts".into()];
    let near = engram.search(&near).await.expect("search");
    run(&near);
    let contents: Vec<&str> = near
        .hits
        .iter()
        .map(|h| h.memory.content.as_str())
        .collect();
    for wanted in [&on_get_user, &on_db, &on_routes] {
        assert!(contents.contains(&wanted.content.as_str()), "{contents:?}");
    }
    assert!(!contents.contains(&unrelated.content.as_str()));
    assert!(near.hits.iter().all(|h| h.breakdown.graph.is_some()));
    // Equal evidence, equal rank: both neighbours score the same in the graph path and
    // share a rank, so neither gets a larger share of the fusion for its (random) id; and
    // it is rank 3, the place of the last of the two, as a tie holds no better place.
    let graph_rank =
        |content: &str| hit_with(&near, content).and_then(|h| h.breakdown.graph.map(|g| g.rank));
    assert_eq!(graph_rank(&on_db.content), Some(3), "{near:#?}");
    assert_eq!(graph_rank(&on_routes.content), Some(3), "{near:#?}");

    // A file the query names (here by a stack frame, from another machine's checkout)
    // finds its memories through the graph path, without the neighbourhood a recently
    // touched file brings: users.ts imports db.ts, yet its memory is not a graph hit.
    let framed = engram
        .search(&SearchQuery::new(
            "TypeError: pool is undefined\n    at close (/home/ci/checkout/src/db.ts:12:5)",
        ))
        .await
        .expect("search");
    run(&framed);
    let graph_hit =
        |content: &str| hit_with(&framed, content).is_some_and(|h| h.breakdown.graph.is_some());
    assert!(graph_hit(&on_db.content), "{framed:#?}");
    assert!(!graph_hit(&on_get_user.content), "{framed:#?}");
    assert!(!graph_hit(&on_routes.content), "{framed:#?}");
    assert_eq!(framed.hits[0].memory.content, on_db.content, "{framed:#?}");

    // A named file that is also recent counts once, as recent: the memory on db.ts scores
    // what the recent file alone gives it.
    let graph_metric = |response: &engram::SearchResponse, content: &str| {
        hit_with(response, content).and_then(|h| h.breakdown.graph.map(|g| g.metric))
    };
    let mut recent_db = SearchQuery::new("what should I know");
    recent_db.context.recent_files = vec!["src/db.ts".into()];
    let recent_db = engram.search(&recent_db).await.expect("search");
    run(&recent_db);
    let mut both = SearchQuery::new("pool is undefined in src/db.ts");
    both.context.recent_files = vec!["src/db.ts".into()];
    let both = engram.search(&both).await.expect("search");
    run(&both);
    let alone = graph_metric(&recent_db, &on_db.content);
    assert!(alone.is_some_and(|m| m > 0.0), "{recent_db:#?}");
    assert_eq!(graph_metric(&both, &on_db.content), alone, "{both:#?}");

    // Names in a report's summary line lead the graph path; the names of its body count
    // half. routes.ts defines `handler` and db.ts `query`: whichever the first line names
    // ranks its file's memory first in the graph path.
    let (routes, db) = (on_routes.content.as_str(), on_db.content.as_str());
    for (text, leader, follower) in [
        (
            "`handler` returns too early\nit awaits `query` first",
            routes,
            db,
        ),
        (
            "`query` returns too early\nthe `handler` awaits it",
            db,
            routes,
        ),
    ] {
        let [lead, follow] = graph_metrics(engram, text, [leader, follower]).await;
        assert!(lead > follow && follow > 0.0, "{text}: {lead} vs {follow}");
    }

    // Switching the graph path off loses the symbol match: the memory is then found only
    // through its file name in the keyword index (`users` ~ `user`), with a lower score.
    let mut off = SearchQuery::new("why is getUser slow");
    off.stages.graph = false;
    let off = engram.search(&off).await.expect("search");
    run(&off);
    assert!(off.hits.iter().all(|h| h.breakdown.graph.is_none()));
    let without = hit_with(&off, &on_get_user.content).map_or(0.0, |h| h.score);
    assert!(
        without < named.hits[0].score,
        "{without} vs {}",
        named.hits[0].score
    );

    // Filters apply to the graph path too.
    let mut filtered = SearchQuery::new("why is getUser slow");
    filtered.context.recent_files = vec!["src/users.ts".into()];
    filtered.files = vec!["src/db.ts".into()];
    let filtered = engram.search(&filtered).await.expect("search");
    run(&filtered);
    let contents: Vec<&str> = filtered
        .hits
        .iter()
        .map(|h| h.memory.content.as_str())
        .collect();
    assert_eq!(contents, [on_db.content.as_str()]);

    // Excluded ids leave every path: the graph's and the name's first hit is gone, the
    // rest of the ranking stays.
    let mut excluding = SearchQuery::new("why is getUser slow");
    excluding.exclude_ids = vec![named.hits[0].memory.id.clone()];
    let excluding = engram.search(&excluding).await.expect("search");
    run(&excluding);
    assert!(
        excluding
            .hits
            .iter()
            .all(|h| h.memory.id != named.hits[0].memory.id),
        "{excluding:#?}"
    );
    assert_eq!(
        excluding.hits.first().map(|h| &h.memory.id),
        named.hits.get(1).map(|h| &h.memory.id),
        "{excluding:#?}"
    );

    // The boost reads file adjacency from the candidate statement: a candidate past the
    // top 10 moves up when its file neighbours a top result's file in the code graph
    // (users.ts imports db.ts) or by co-access (users.ts and cache.ts were committed
    // together), and not otherwise.
    engram
        .bootstrap_from_git_log(&format!(
            "commit:{}\n\nsrc/cache.ts\nsrc/users.ts\n",
            "a".repeat(40)
        ))
        .await
        .expect("git log");
    let regions = [
        "north", "south", "east", "west", "central", "coastal", "alpine", "desert", "island",
        "valley",
    ];
    let mut top_ids = Vec::new();
    for region in regions {
        let m = memory(
            &format!("Rollout to {region}: rollout flags flip per rollout wave"),
            &["src/users.ts"],
            None,
        );
        top_ids.push(engram.remember(m).await.expect("remember").id);
    }
    let weak = |file: &str| {
        memory(
            &format!(
                "The {file} owners review dashboards, alerts, budgets and the rollout calendar"
            ),
            &[file],
            None,
        )
    };
    let graph_neighbour = weak("src/db.ts");
    let co_accessed = weak("src/cache.ts");
    let stranger = weak("docs/guide.md");
    for m in [&graph_neighbour, &co_accessed, &stranger] {
        engram.remember(m.clone()).await.expect("remember");
    }
    // Every candidate is returned (the ten top memories tie, so a cut would fall by id).
    let mut rollout = SearchQuery::new("rollout");
    rollout.limit = 20;
    let boosted = engram.search(&rollout).await.expect("search");
    assert_eq!(boosted.hits.len(), 13);
    run(&boosted);
    let hit = |content: &str| {
        hit_with(&boosted, content).unwrap_or_else(|| panic!("{content} not found: {boosted:#?}"))
    };
    for neighbour in [&graph_neighbour, &co_accessed] {
        let b = &hit(&neighbour.content).breakdown;
        assert!(b.graph_boost > 0.0, "{:?}: {b:#?}", neighbour.related_files);
        assert!(!b.boosted_by.is_empty() && b.boosted_by.iter().all(|id| top_ids.contains(id)));
    }
    let b = &hit(&stranger.content).breakdown;
    assert_eq!((b.graph_boost, b.boosted_by.len()), (0.0, 0), "{b:#?}");

    // db.ts changes on disk: its links to users.ts stop counting until it is re-indexed;
    // co-access is not the code graph's and still counts.
    let boost_of = |response: &engram::SearchResponse, m: &NewMemory| {
        hit_with(response, &m.content).map(|h| h.breakdown.graph_boost)
    };
    engram
        .mark_stale(&["src/db.ts".into()])
        .await
        .expect("mark stale");
    let stale = engram.search(&rollout).await.expect("search");
    run(&stale);
    assert_eq!(boost_of(&stale, &graph_neighbour), Some(0.0), "{stale:#?}");
    assert!(boost_of(&stale, &co_accessed).is_some_and(|b| b > 0.0));
    engram
        .index_files(&repo(USERS), &IndexOptions::default())
        .await
        .expect("re-index");
    let fresh = engram.search(&rollout).await.expect("search");
    run(&fresh);
    assert!(
        boost_of(&fresh, &graph_neighbour).is_some_and(|b| b > 0.0),
        "{fresh:#?}"
    );

    RetrievalOutcome { rankings }
}
