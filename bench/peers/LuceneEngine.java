// Lucene 8 side of bench/engine.ts (compiled with javac against Debian's liblucene8-java at bench
// time). Usage: LuceneEngine <indexDir> <docs.tsv> <queries.tsv> <url|text>
//
// docs.tsv: url, title, headings (separated by U+001F), content (tabs and line breaks flattened).
// queries.tsv: query, target URL. EnglishAnalyzer, BM25 (Lucene's default similarity), fields
// title/headings/content boosted 4/2/1 through MultiFieldQueryParser, on-disk FSDirectory.
// `url` stores the URL only (like LucenePeer.java); `text` also stores title, headings, content.
//
// Builds (timed: reading the file, analysing, writing, commit), then forceMerge(1) in a new
// writer (timed). Both writers use LogByteSizeMergePolicy, which merges only adjacent segments,
// so doc ids keep the input order and exact score ties rank the earlier document first (the
// manual's own page before its shuffled copies, which BM25 scores the same): FTS5 ties by rowid
// the same way, where the default TieredMergePolicy reorders documents and left every target
// behind its ~86 copies at ~100k documents (found@10 0.000). Then it prints one JSON line
// {"event":"ready",...} and answers commands on stdin, one JSON line each:
//   warm           one untimed pass of every query, OR and AND
//   round OR|AND   one timed pass: per-query microseconds (parse + top 10 + stored URLs) and
//                  how many targets were in the top 10
//   quit
import java.io.*;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.util.*;
import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.analysis.en.EnglishAnalyzer;
import org.apache.lucene.document.*;
import org.apache.lucene.index.*;
import org.apache.lucene.queryparser.classic.MultiFieldQueryParser;
import org.apache.lucene.queryparser.classic.QueryParser;
import org.apache.lucene.search.*;
import org.apache.lucene.store.FSDirectory;

public class LuceneEngine {
  static final String[] FIELDS = {"title", "headings", "content"};

  public static void main(String[] args) throws Exception {
    Path indexDir = Paths.get(args[0]);
    boolean storeText = args.length > 3 && args[3].equals("text");
    Analyzer analyzer = new EnglishAnalyzer();
    PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), true, "UTF-8");
    Field.Store textStore = storeText ? Field.Store.YES : Field.Store.NO;

    long t0 = System.nanoTime();
    int docs = 0;
    try (FSDirectory dir = FSDirectory.open(indexDir);
        IndexWriter w = new IndexWriter(dir, new IndexWriterConfig(analyzer).setOpenMode(IndexWriterConfig.OpenMode.CREATE).setMergePolicy(new LogByteSizeMergePolicy()));
        BufferedReader r = Files.newBufferedReader(Paths.get(args[1]), StandardCharsets.UTF_8)) {
      String line;
      while ((line = r.readLine()) != null) {
        if (line.isEmpty()) continue;
        String[] f = line.split("\t", -1);
        Document d = new Document();
        d.add(new StringField("url", f[0], Field.Store.YES));
        d.add(new TextField("title", f[1], textStore));
        d.add(new TextField("headings", f[2], textStore));
        d.add(new TextField("content", f[3], textStore));
        w.addDocument(d);
        docs++;
      }
      w.commit();
    }
    double buildSeconds = (System.nanoTime() - t0) / 1e9;
    int segmentsBefore;
    try (FSDirectory dir = FSDirectory.open(indexDir); DirectoryReader reader = DirectoryReader.open(dir)) {
      segmentsBefore = reader.leaves().size();
    }
    long t1 = System.nanoTime();
    try (FSDirectory dir = FSDirectory.open(indexDir);
        IndexWriter w = new IndexWriter(dir, new IndexWriterConfig(analyzer).setOpenMode(IndexWriterConfig.OpenMode.APPEND).setMergePolicy(new LogByteSizeMergePolicy()))) {
      w.forceMerge(1);
      w.commit();
    }
    double mergeSeconds = (System.nanoTime() - t1) / 1e9;

    // Bytes by file kind after the merge (the directory holds nothing else).
    long bytes = 0;
    TreeMap<String, Long> byExt = new TreeMap<>();
    try (DirectoryStream<Path> files = Files.newDirectoryStream(indexDir)) {
      for (Path p : files) {
        long n = Files.size(p);
        bytes += n;
        String name = p.getFileName().toString();
        int dot = name.lastIndexOf('.');
        String ext = dot >= 0 ? name.substring(dot + 1) : name.replaceAll("_\\w+$", "_N");
        byExt.merge(ext, n, Long::sum);
      }
    }

    List<String> queries = new ArrayList<>();
    List<String> targets = new ArrayList<>();
    for (String line : Files.readAllLines(Paths.get(args[2]), StandardCharsets.UTF_8)) {
      if (line.isEmpty()) continue;
      String[] f = line.split("\t", -1);
      queries.add(f[0]);
      targets.add(f.length > 1 ? f[1] : "");
    }

    FSDirectory dir = FSDirectory.open(indexDir);
    DirectoryReader reader = DirectoryReader.open(dir);
    IndexSearcher searcher = new IndexSearcher(reader);
    Map<String, Float> boosts = new HashMap<>();
    boosts.put("title", 4f);
    boosts.put("headings", 2f);
    boosts.put("content", 1f);
    MultiFieldQueryParser or = new MultiFieldQueryParser(FIELDS, analyzer, boosts);
    MultiFieldQueryParser and = new MultiFieldQueryParser(FIELDS, analyzer, boosts);
    and.setDefaultOperator(QueryParser.Operator.AND);

    StringBuilder ready = new StringBuilder();
    ready.append("{\"event\":\"ready\",\"docs\":").append(docs)
        .append(",\"buildSeconds\":").append(buildSeconds)
        .append(",\"mergeSeconds\":").append(mergeSeconds)
        .append(",\"segmentsBeforeMerge\":").append(segmentsBefore)
        .append(",\"segmentsAfterMerge\":").append(reader.leaves().size())
        .append(",\"bytes\":").append(bytes)
        .append(",\"storeText\":").append(storeText)
        .append(",\"bytesByExt\":{");
    boolean first = true;
    for (Map.Entry<String, Long> e : byExt.entrySet()) {
      if (!first) ready.append(',');
      first = false;
      ready.append('"').append(e.getKey()).append("\":").append(e.getValue());
    }
    ready.append("}}");
    out.println(ready);

    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    String cmd;
    while ((cmd = in.readLine()) != null) {
      cmd = cmd.trim();
      if (cmd.equals("quit")) break;
      if (cmd.equals("warm")) {
        for (int i = 0; i < queries.size(); i++) {
          ask(searcher, or, queries.get(i));
          ask(searcher, and, queries.get(i));
        }
        out.println("{\"event\":\"warm\"}");
      } else if (cmd.startsWith("round ")) {
        String mode = cmd.substring(6).trim();
        MultiFieldQueryParser qp = mode.equals("AND") ? and : or;
        long[] us = new long[queries.size()];
        int found = 0;
        for (int i = 0; i < queries.size(); i++) {
          long s = System.nanoTime();
          List<String> urls = ask(searcher, qp, queries.get(i));
          us[i] = (System.nanoTime() - s) / 1000;
          if (urls.contains(targets.get(i))) found++;
        }
        StringBuilder sb = new StringBuilder();
        sb.append("{\"event\":\"round\",\"mode\":\"").append(mode).append("\",\"found\":").append(found).append(",\"us\":[");
        for (int i = 0; i < us.length; i++) {
          if (i > 0) sb.append(',');
          sb.append(us[i]);
        }
        sb.append("]}");
        out.println(sb);
      } else {
        out.println("{\"event\":\"error\",\"message\":\"unknown command\"}");
      }
    }
    reader.close();
    dir.close();
  }

  /** The top 10 URLs of `q` (an unparsable or empty query answers nothing). */
  static List<String> ask(IndexSearcher searcher, MultiFieldQueryParser qp, String q) {
    List<String> urls = new ArrayList<>(10);
    try {
      Query query = qp.parse(QueryParser.escape(q));
      for (ScoreDoc sd : searcher.search(query, 10).scoreDocs) urls.add(searcher.doc(sd.doc).get("url"));
    } catch (Exception e) {
      // nothing
    }
    return urls;
  }
}
